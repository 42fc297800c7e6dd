# PROGRAM.py runs under a Python interpreter; options after PROGRAM are its own.
# needs: recorder
. "$(dirname "$0")/lib.sh"

mkdir bin
printf '#!/bin/sh\necho "fakepy $*"\n' >fakepy
printf '#!/bin/sh\necho "path-python3 $*"\n' >bin/python3
printf '#!/bin/sh\necho "prog $*"\n' >prog
chmod +x fakepy bin/python3 prog
echo 'print("hello")' >train.py

gp --trace --python ./fakepy -o a.json.gz train.py --epochs 1
check_rc 0 "--python"
check_out "fakepy train.py --epochs 1" "--python"

GPUPROF_PYTHON=$TMP/fakepy gp --trace -o b.json.gz train.py -x
check_out "fakepy train.py -x" "GPUPROF_PYTHON"

GPUPROF_PYTHON=/nonexistent/python gp --trace --python ./fakepy -o c.json.gz train.py
check_out "fakepy train.py" "--python over GPUPROF_PYTHON"

PATH="$TMP/bin:$PATH" gp --trace -o d.json.gz train.py
check_out "path-python3 train.py" "python3 from PATH"

# the default name drops .py
printf '#!/bin/sh\necho "$GPUPROF_OUTPUT"\n' >showout
chmod +x showout
gp --trace --python ./showout train.py
grep -qxE "$TMP/gpuprof-train-[0-9]{8}-[0-9]{6}\\.json\\.gz" out ||
	{ fail "default name of a .py"; show out >&2; }

gp --trace --python ./fakepy -o e.json.gz nosuch.py
check_rc 2 "missing script"
check_err "gpuprof: cannot run 'nosuch.py': No such file or directory" "missing script"
check_no_stdout "missing script"

gp --trace --python ./nopython -o f.json.gz train.py
check_rc 2 "missing interpreter"
check_err "gpuprof: cannot run './nopython': No such file or directory" "missing interpreter"

# everything after PROGRAM is PROGRAM's, even what looks like gpuprof's options
gp --trace ./prog -o x.json.gz --force --help -- --python y
check_rc 0 "options after PROGRAM"
check_out "prog -o x.json.gz --force --help -- --python y" "options after PROGRAM"
[ ! -e x.json.gz ] || fail "options after PROGRAM: -o was taken by gpuprof"
gp --trace --python ./fakepy -o g.json.gz train.py -o x --python z
check_out "fakepy train.py -o x --python z" "options after PROGRAM.py"

# -- ends gpuprof's options
gp --trace -o h.json.gz -- ./prog --force
check_out "prog --force" "--"

finish
