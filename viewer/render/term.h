/* Text that reaches a terminal or a log: what in a trace's names could act
 * on the reader's terminal or hide what it shows is written escaped. C0
 * control characters and DEL as \xNN, C1 control characters (U+0080 to
 * U+009F: a terminal may take U+009B as an escape sequence's start) and the
 * bidirectional controls (U+061C, U+200E, U+200F, U+202A to U+202E, U+2066
 * to U+2069: they reorder what follows them) as \uNNNN, and a byte that is
 * not part of valid UTF-8 as \xNN. Everything else, other UTF-8 included,
 * is kept. The JSON reports carry the names as they are, escaped as JSON. */
#ifndef GPUPROF_RENDER_TERM_H
#define GPUPROF_RENDER_TERM_H

#include <stddef.h>

/* The length of the unsafe character at s (n bytes left), 0 when s starts
 * with one that is safe; its escape into esc. */
#define GP_TERM_ESC_MAX 12
size_t gp_term_unsafe(const char *s, size_t n, char esc[GP_TERM_ESC_MAX]);

/* The length of the safe character at s (a valid UTF-8 sequence), as
 * gp_term_unsafe found it safe; 1 for anything else. */
size_t gp_term_char_len(const char *s, size_t n);

/* s escaped into buf (cap bytes, NUL-terminated): where it does not fit, cut
 * at a character and ended with "...". Returns buf. NULL gives "". */
char *gp_term_escape(char *buf, size_t cap, const char *s);

/* s escaped, whole, in memory of its own (the caller frees it); NULL when
 * out of memory. NULL gives "". */
char *gp_term_escape_dup(const char *s);

/* The same into one of a few rotating buffers of GP_TERM_BUF bytes, for the
 * arguments of one printf (at most GP_TERM_SLOTS strings). Not thread-safe:
 * the reports are written by one thread. */
#define GP_TERM_BUF 8192
#define GP_TERM_SLOTS 8
const char *gp_term_str(const char *s);

#endif
