# Outputs written safely, by one rule, for report, merge and recover: an
# existing output needs --force (and the error line says so); no command
# writes over one of its own inputs (whatever name reaches it); a symbolic
# link planted where an output's temporary file might go is never followed.
. "$(dirname "$0")/lib.sh"
need_python
tool() { "$PYTHON" "$HERE/trace_tool.py" "$@"; }

tool write t.json.gz 5 || exit 1
tool write u.json.gz 5 --pid 4242 || exit 1
cp t.json.gz t.orig
cp u.json.gz u.orig
echo "precious" >victim
cp victim victim.orig

# same_file A B WHAT: A is byte for byte B
same_file() {
	cmp -s "$1" "$2" || fail "$3: $1 changed"
}

# refused_input WHAT ARGS...: exit 2, one line saying the output is an input;
# the inputs untouched
refused_input() {
	_what=$1
	shift
	gp "$@"
	check_rc 2 "$_what"
	check_err "it cannot be the output too" "$_what"
	# one line (after a run directory's own note)
	[ "$(grep -cv 'has no manifest' err)" -eq 1 ] || { fail "$_what: more than one line"; show err >&2; }
	same_file t.json.gz t.orig "$_what"
	same_file u.json.gz u.orig "$_what"
}

# ---- one overwrite rule: an existing output needs --force ----
gp report t.json.gz -o page.html
check_rc 0 "report"
echo "an older page" >page.html
gp report t.json.gz -o page.html
check_rc 2 "report over an existing page"
check_err "gpuprof: page.html already exists (--force replaces it)" "report over an existing page"
[ "$(cat page.html)" = "an older page" ] || fail "report without --force replaced the page"
gp report t.json.gz -o page.html --force
check_rc 0 "report --force"
grep -q '<html' page.html || fail "report --force did not write the page"

gp merge t.json.gz -o m.json.gz
check_rc 0 "merge"
gp merge t.json.gz -o m.json.gz
check_rc 2 "merge over an existing output"
check_err "gpuprof: m.json.gz already exists (--force replaces it)" "merge over an existing output"
gp merge t.json.gz -o m.json.gz --force
check_rc 0 "merge --force"

tool write cut.json.gz 5 --cut flush || exit 1
gp recover cut.json.gz -o fixed.json.gz
check_rc 0 "recover -o"
gp recover cut.json.gz -o fixed.json.gz
check_rc 2 "recover over an existing output"
check_err "gpuprof: fixed.json.gz already exists (--force replaces it)" "recover over an existing output"
echo "old" >fixed.json.gz
gp recover cut.json.gz -o fixed.json.gz --force
check_rc 0 "recover --force"
tool check fixed.json.gz --recovered yes --events 6 >/dev/null || fail "recover --force: bad result"

# the help says it, for each
for c in report merge recover; do
	"$GPUPROF" "$c" --help >help 2>&1
	grep -q -- "--force" help || fail "$c --help does not describe --force"
done

# ---- no command writes over one of its own inputs ----
refused_input "report -o TRACE" report t.json.gz -o t.json.gz
refused_input "report -o TRACE --force" report t.json.gz -o t.json.gz --force
refused_input "report --base B -o B" report t.json.gz --base u.json.gz -o u.json.gz --force
ln -s t.json.gz other-name.json.gz
refused_input "report -o a link to TRACE" report t.json.gz -o other-name.json.gz --force
ln t.json.gz hard-link.json.gz
refused_input "report -o a hard link to TRACE" report t.json.gz -o hard-link.json.gz --force
refused_input "merge -o TRACE" merge t.json.gz u.json.gz -o u.json.gz --force
refused_input "recover -o TRACE" recover t.json.gz -o t.json.gz --force
mkdir run
cp t.json.gz run/rank0.100.json.gz
cp u.json.gz run/rank1.4242.json.gz
cp run/rank0.100.json.gz rank0.orig
refused_input "report RUN -o RUN's trace" report run -o run/rank0.100.json.gz --force
refused_input "merge RUN -o RUN's trace" merge run -o run/rank0.100.json.gz --force
same_file run/rank0.100.json.gz rank0.orig "the run's trace"

# ---- a planted link is never followed ----
tool write fresh.json.gz 5 || exit 1
# The page's temporary file used to be PAGE.PID.tmp, opened with fopen("w"):
# a link planted under that name (the pid is gpuprof's own here: exec keeps
# the shell's) made gpuprof write the page into the link's target.
sh -c 'ln -s victim planted.html.$$.tmp; ln -s victim planted.html.$$; exec "$0" report fresh.json.gz -o planted.html' \
	"$GPUPROF" >out 2>err
rc=$?
check_rc 0 "report beside planted links"
same_file victim victim.orig "report beside planted links"
[ -f planted.html ] && [ ! -L planted.html ] || fail "report beside planted links: the page is no regular file"
# a link at the output's own name is replaced, not written through
ln -s victim linked.html
gp report fresh.json.gz -o linked.html --force
check_rc 0 "report -o a link, --force"
same_file victim victim.orig "report -o a link"
[ -f linked.html ] && [ ! -L linked.html ] || fail "report -o a link: the page is no regular file"
ln -s victim linked.json.gz
gp merge fresh.json.gz -o linked.json.gz --force
check_rc 0 "merge -o a link, --force"
same_file victim victim.orig "merge -o a link"
[ ! -L linked.json.gz ] || fail "merge -o a link: still a link"
ln -s victim linked-fixed.json.gz
gp recover cut.json.gz -o linked-fixed.json.gz --force
check_rc 0 "recover -o a link, --force"
same_file victim victim.orig "recover -o a link"
[ ! -L linked-fixed.json.gz ] || fail "recover -o a link: still a link"

# nothing left behind by the refusals: no temporary file anywhere
left=$(ls -A | grep -E '^\.' || true)
[ -z "$left" ] || fail "temporary files left behind: $left"
finish
