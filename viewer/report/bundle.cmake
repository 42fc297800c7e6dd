# Writes OUT: the page's one script, made of the ES modules MODULES
# ("PATH|PATH|...", assets/js/, in the order of viewer/report/CMakeLists.txt:
# each module after those it imports from), so that the page stays one file
# that fetches nothing and needs no bundler from npm. A module is
#
#   /* what it is for */                  its head, up to the first empty
#   import { a, b } from "./other.js";    line: comments and imports only
#
#   export function a(...) { ... }        its body
#
# The script is the last module's (main.js's) opening comment, then
#
#   (function () {
#   	"use strict";
#
#   BODY                                   each module's body, in order, one
#                                          empty line between two; "export "
#   })();                                  dropped, each line one tab in
#
# so that the modules share one scope, as imports would have them, and
# nothing is left on the page's global object. Only "export function",
# "export const" and "export let" are known; anything else fails the build.
string(REPLACE "|" ";" modules "${MODULES}")
list(LENGTH modules count)
set(bodies "")
set(opening "")
set(n 0)
foreach(path IN LISTS modules)
  math(EXPR n "${n} + 1")
  file(READ "${path}" text)
  string(FIND "${text}" "\n\n" split)
  if(split LESS 0)
    message(FATAL_ERROR "${path}: no empty line after the module's head")
  endif()
  math(EXPR from "${split} + 2")
  string(SUBSTRING "${text}" 0 ${split} head)
  string(SUBSTRING "${text}" ${from} -1 body)
  # the head: comments and imports of modules beside it, nothing else
  string(REGEX REPLACE "/\\*([^*]|\\*+[^*/])*\\*+/" "" rest "${head}")
  string(REGEX REPLACE "(^|\n)(//[^\n]*|import { [A-Za-z0-9_$, ]+ } from \"\\./[a-z_]+\\.js\";)" "\\1" rest "${rest}")
  if(NOT rest MATCHES "^[ \t\n]*$")
    message(FATAL_ERROR "${path}: the head holds more than comments and imports:${rest}")
  endif()
  if(body MATCHES "(^|\n)import[ {]")
    message(FATAL_ERROR "${path}: an import after the head (imports go before the first empty line)")
  endif()
  if(NOT body MATCHES "\n$" OR body MATCHES "\n\n$")
    message(FATAL_ERROR "${path}: the module must end in one newline")
  endif()
  # "\n" first, so that the first line is matched as the others are
  string(REGEX REPLACE "\nexport (function|const|let) " "\n\\1 " body "\n${body}")
  if(body MATCHES "\nexport[ {]")
    message(FATAL_ERROR "${path}: only export function, export const and export let are bundled")
  endif()
  string(REGEX REPLACE "\n([^\n])" "\n\t\\1" body "${body}")
  string(SUBSTRING "${body}" 1 -1 body)
  if(n GREATER 1)
    string(APPEND bodies "\n")
  endif()
  string(APPEND bodies "${body}")
  if(n EQUAL count)
    if(NOT head MATCHES "^(/\\*([^*]|\\*+[^*/])*\\*+/)\n")
      message(FATAL_ERROR "${path}: the last module opens with the comment that opens the page's script")
    endif()
    set(opening "${CMAKE_MATCH_1}")
  endif()
endforeach()
file(WRITE "${OUT}.tmp" "${opening}\n(function () {\n\t\"use strict\";\n\n${bodies}})();\n")
file(RENAME "${OUT}.tmp" "${OUT}")
