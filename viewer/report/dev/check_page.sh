#!/bin/bash
# Load a report page in headless Chromium: print its self-test JSON and every
# console message or CSP violation (there must be none), and take a
# screenshot.   check_page.sh PAGE.html [SCREENSHOT.png] [WIDTH,HEIGHT]
set -u
page=$(realpath "$1")
shot=${2:-${page%.html}.png}
size=${3:-1400,3000}
log=$(mktemp)
profile=$(mktemp -d)
trap 'rm -rf "$log" "$profile"' EXIT
flags=(--headless=new --no-sandbox --disable-gpu --enable-logging=stderr --v=0
       --virtual-time-budget=2000 --user-data-dir="$profile")
chromium "${flags[@]}" --dump-dom "file://$page" 2>"$log" |
	python3 -c '
import re, sys, html
dom = sys.stdin.read()
ready = re.search(r"<html[^>]*data-gpuprof-ready=\"1\"", dom) is not None
# the last match: the script text names the element too
at = dom.rfind("<pre id=\"gpuprof-selftest\"")
m = re.match(r"<pre[^>]*>(.*?)</pre>", dom[at:], re.S) if at >= 0 else None
print("ready:", ready)
print("selftest:", html.unescape(m.group(1)) if m else None)'
# console output and CSP violations, without Chromium's own chatter
grep -E 'CONSOLE|Refused|Content.Security|Uncaught' "$log" || echo "console: clean"
chromium "${flags[@]}" --screenshot="$shot" --window-size="$size" "file://$page" 2>/dev/null >/dev/null
echo "screenshot: $shot"
