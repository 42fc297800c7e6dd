/* One event line's members -> what it says (struct an_dec), from the line
 * alone. It depends on nothing else, so the reader's worker threads run it
 * (exporters/trace_reader.h, gp_tr_set_decoder) and the source applies its
 * records in file order (source.c). Every check of a line's own content is
 * here, with its message; what needs the trace read so far (the meta's pid,
 * the devices, interned names, the reorder window) is source.c's. */
#ifndef GPUPROF_AN_DECODE_H
#define GPUPROF_AN_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "event.h"
#include "exporters/trace_reader.h"
#include "exporters/trace_scan.h"

enum an_dec_kind {
	DEC_IGNORED,   /* an event no analysis uses: counted, dropped */
	DEC_NOTHING,   /* read, nothing to keep (an API call without corr, an imported pool) */
	DEC_EVENT,     /* ev, to the reorder window */
	DEC_API,       /* an API call: ev.tid, ev.ts its end, ev.coll.corr, its name */
	DEC_WATERMARK, /* ev.ts */
	DEC_MEMBERS,   /* source.c reads the members itself: members says what */
};

/* DEC_MEMBERS: what the line is. */
enum an_dec_members {
	DM_META,     /* the first line's gpuprof.meta */
	DM_DEVICE,   /* gpuprof.device */
	DM_END,      /* gpuprof.end */
	DM_DROPPED,  /* gpuprof.dropped */
	DM_STACK,    /* torch.stack */
	DM_OUTLINE,  /* gpuprof.outline (outline.h), at ev.ts */
	DM_WINDOW,   /* gpuprof.window: a dump's full events begin at ev.ts */
	DM_DUMP,     /* gpuprof.dump */
	DM_CAP,      /* gpuprof.cap, at ev.ts */
	DM_HISTORY,  /* a mark of PyTorch's allocator history (history.h), at ev.ts */
};

/* What names the event: nothing, the string at name, PyTorch's caching
 * allocator, or a collective's kernel (name, cut at its arguments). */
enum an_dec_name { DN_NONE, DN_STR, DN_TORCH_API, DN_COLL_KERNEL };

/* A string member in place: line + off, len bytes, still escaped when esc. */
struct an_slice {
	uint32_t off, len;
	uint8_t esc;
};

/* The string value v of line as a slice, and back. */
static inline struct an_slice an_slice_of(const char *line, const struct gp_json_val *v)
{
	return (struct an_slice){ .off = (uint32_t)(v->p - line), .len = v->n, .esc = v->esc };
}

static inline struct gp_json_val an_slice_val(const char *line, const struct an_slice *sl)
{
	return (struct gp_json_val){ .p = line + sl->off, .n = sl->len, .type = GP_JSON_STR,
				     .esc = sl->esc };
}

/* Names this long or shorter, without escapes, are copied into the record:
 * the reading thread then does not touch the line (another core's cache). */
#define AN_DEC_NAME_COPY 46

struct an_dec {
	struct an_ev ev;          /* name NULL: name_is says */
	struct an_slice name;     /* DN_STR, DN_COLL_KERNEL */
	char name_copy[AN_DEC_NAME_COPY]; /* DN_STR with name_copied: its bytes */
	uint8_t name_copied;
	struct an_slice caller;   /* alloc with has_caller: the calling library's file */
	int64_t pid;              /* AE_COLL with pid_set: the process of its GPU */
	uint8_t kind;             /* enum an_dec_kind */
	uint8_t members;          /* enum an_dec_members */
	uint8_t name_is;          /* enum an_dec_name */
	uint8_t has_caller;
	uint8_t pid_set;          /* also when decoding failed past the pid */
	uint8_t guessed;          /* torch.alloc whose size the hook could not read */
};

/* The reader keeps one a decoded line (gp_tr_set_decoder()). */
_Static_assert(sizeof(struct an_dec) <= GP_TR_MAX_REC, "struct an_dec too large for the reader");

/* l: the members of the line at line (gp_tr_scan_line, skip_ignored set
 * after the meta); first: no gpuprof.meta yet (this line must be it).
 * 0, or -EINVAL with the message in why (whycap > 0; no "PATH:LINE: "). */
int an_decode(const struct gp_tr_members *l, const char *line, int first, struct an_dec *d,
	      char *why, size_t whycap);
/* The reader's decoder (gp_tr_decode_fn), after the meta: 1 where rec (an
 * struct an_dec) holds the line; 0 where source.c reads the members (the
 * line is DEC_MEMBERS, or bad: an_decode() says why, there). */
int an_decode_rec(const struct gp_tr_members *l, const char *line, size_t n, void *rec);
/* The checks decode.c makes, for the members source.c reads itself (the
 * meta, devices, stacks), with the same messages in why: a required
 * number at most max (0 or -EINVAL); a string (1, 0 where absent and not
 * required, or -EINVAL). */
int an_need_u64(const struct gp_tr_members *l, const struct gp_json_val *v, const char *key,
		uint64_t max, uint64_t *out, char *why, size_t whycap);
int an_check_str(const struct gp_tr_members *l, const struct gp_json_val *v, const char *key,
		 int required, char *why, size_t whycap);
/* What a message calls the line's event: its own name only when it is one
 * of the format's, never user text. buf: at least AN_WHAT_MAX bytes. */
#define AN_WHAT_MAX 48
const char *an_ev_what(const struct gp_tr_members *l, char *buf);

#endif
