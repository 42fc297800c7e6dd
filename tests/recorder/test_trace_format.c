/* The recorder's decoders write what exporters/trace_format.def says.
 *
 * Fake CUPTI records (one of each kind the decoder reads) and host events
 * (NVTX, oom, the API callbacks' allocations, a PyTorch memory mark, what
 * the PyTorch allocator hook hands over) go through the real decoders
 * (profiler/cupti_decode.c, host_decode.c, torch_decode.c) into a
 * real trace writer; then every event of the file is checked against the
 * definition: a known event (ph, cat, scope), top-level members it lists,
 * args fields it lists for that event with their JSON types, and those
 * marked ALWAYS present. The events only writer_thread.c writes (meta,
 * watermark, alloc_capture, dropped, end, GPU memory: it needs the writer
 * thread) and PyTorch history are not made here. No GPU: CUPTI's record
 * iterator is replaced below. */
#include "writer_ctx.h"

#include "api_callbacks.h"
#include "api_select.h"
#include "context_devices.h"

#include <cupti.h>
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "check.h"
#include "torch_alloc.h"
#include "torch_marks.h"


/* ---- the definition as tables ---- */

enum { T_U64, T_I64, T_NUM, T_STR, T_HEX, T_BOOL, T_ARR, T_OBJ };
enum { W_ALWAYS, W_SOMETIMES };
#define TYPE(t) T_##t
#define WHEN(w) W_##w

#define GP_FORMAT(version, meaning)
#define GP_CAT(id, name, meaning) static const char *const cat_##id = name;
#define GP_KIND(id, name, meaning)
#define GP_EVENT(id, name, ph, scope, cat, meaning)
#define GP_TOP(id, key, read, type, unit, meaning)
#define GP_FIELD(id, key, read)
#define GP_ARG(event, field, type, unit, when, meaning)
#include "trace_format.def"
#undef GP_CAT
#undef GP_KIND
#undef GP_EVENT
#undef GP_TOP
#undef GP_ARG

enum event_id {
#define GP_CAT(id, name, meaning)
#define GP_KIND(id, name, meaning)
#define GP_EVENT(id, name, ph, scope, cat, meaning) EV_##id,
#define GP_TOP(id, key, read, type, unit, meaning)
#define GP_ARG(event, field, type, unit, when, meaning)
#include "trace_format.def"
	EV_COUNT
};
#undef GP_EVENT

struct event_def {
	const char *id, *name, *cat;
	char ph, scope;
};
static const struct event_def events[EV_COUNT] = {
#define GP_EVENT(id, name, ph, scope, cat, meaning) { #id, name, cat_##cat, ph, scope },
#include "trace_format.def"
};
#undef GP_EVENT
#define GP_EVENT(id, name, ph, scope, cat, meaning)

static const struct { const char *key; int type; } tops[] = {
#undef GP_TOP
#define GP_TOP(id, key, read, type, unit, meaning) { key, TYPE(type) },
#include "trace_format.def"
};
#undef GP_TOP
#define GP_TOP(id, key, read, type, unit, meaning)

static const struct { int event; const char *key; int type, when; } args[] = {
#undef GP_ARG
#define GP_ARG(event, field, type, unit, when, meaning) \
	{ EV_##event, GP_F_##field, TYPE(type), WHEN(when) },
#include "trace_format.def"
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* ---- what the decoders call outside themselves ---- */

struct gp_rec_globals gp_rec;
const char *const gp_memory_api_names[] = { "cudaMalloc", "cuMemAllocAsync", "cuMemFree_v2" };

const char *gp_hev_name(const struct gp_host_ev *ev, size_t *len)
{
	*len = ev->name_len;
	return ev->name;
}

int gp_callbacks_tracking(void)
{
	return 0;
}

const char *gp_api_name(int driver, unsigned cbid)
{
	(void)cbid;
	return driver ? "cuLaunchKernel" : "cudaLaunchKernel";
}

int gp_api_is_launch(int driver, unsigned cbid)
{
	(void)driver;
	(void)cbid;
	return 1;
}

/* context_devices.c's: context 3 is on device 1 */
int gp_ctxdev_device(uint32_t context_id, uint32_t *device)
{
	if (context_id != 3)
		return 0;
	*device = 1;
	return 1;
}

static CUpti_Activity *records[24];
static size_t nrecords, next_record;

CUptiResult cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid, CUpti_Activity **record)
{
	(void)buffer, (void)valid;
	if (next_record >= nrecords)
		return CUPTI_ERROR_MAX_LIMIT_REACHED;
	*record = records[next_record++];
	return CUPTI_SUCCESS;
}

/* ---- writing ---- */

static CUpti_ActivityKernel10 kernel;
static CUpti_ActivityMemcpy6 copy;
static CUpti_ActivityMemset4 set;
static CUpti_ActivityMemory4 mem_alloc, mem_free;
static CUpti_ActivityMemoryPool3 pools[3];
static CUpti_ActivityAPI api_rt, api_drv;
static CUpti_ActivityDevice5 device, device1, device2;
static CUpti_ActivityMemory4 mem_static;

static void add(void *r)
{
	records[nrecords++] = r;
}

static void cupti_records(void)
{
	device.kind = CUPTI_ACTIVITY_KIND_DEVICE;
	device.name = "Test GPU";
	device.globalMemorySize = 1 << 30;
	device.computeCapabilityMajor = 9;
	add(&device);
	/* device 1: used only by a module's globals, whose record says device
	 * 0 (as CUPTI 13.0 writes them) and context 3 (device 1); device 2:
	 * never used, so not in the trace */
	device1 = device, device1.id = 1, device1.name = "Test GPU 1";
	add(&device1);
	device2 = device, device2.id = 2, device2.name = "Unused GPU";
	add(&device2);
	mem_static.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
	mem_static.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
	mem_static.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC;
	mem_static.timestamp = 1450, mem_static.address = 0x7d0000000000, mem_static.bytes = 555;
	mem_static.deviceId = 0, mem_static.contextId = 3;
	add(&mem_static);
	kernel.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	kernel.start = 1000, kernel.end = 2000, kernel.streamId = 7, kernel.correlationId = 5;
	kernel.name = "kernel_a", kernel.gridX = kernel.gridY = kernel.gridZ = 1;
	kernel.blockX = 32, kernel.blockY = kernel.blockZ = 1;
	add(&kernel);
	copy.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	copy.start = 1100, copy.end = 1200, copy.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
	copy.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE, copy.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	copy.bytes = 4096, copy.streamId = 7, copy.correlationId = 6;
	add(&copy);
	set.kind = CUPTI_ACTIVITY_KIND_MEMSET;
	set.start = 1300, set.end = 1400, set.bytes = 512, set.value = 0, set.streamId = 7;
	set.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	add(&set);
	mem_alloc.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
	mem_alloc.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
	mem_alloc.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	mem_alloc.timestamp = 1500, mem_alloc.address = 0x7f0000000000, mem_alloc.bytes = 1 << 20;
	mem_alloc.isAsync = 1, mem_alloc.streamId = 7;
	mem_alloc.memoryPoolConfig.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
	mem_alloc.memoryPoolConfig.address = 0x7e0000000000;
	mem_alloc.memoryPoolConfig.pool.size = 1 << 21;
	add(&mem_alloc);
	mem_free = mem_alloc;
	mem_free.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
	mem_free.timestamp = 1600;
	add(&mem_free);
	static const CUpti_ActivityMemoryPoolOperationType ops[3] = {
		CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_CREATED,
		CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_TRIMMED,
		CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_DESTROYED,
	};
	for (int i = 0; i < 3; i++) {
		pools[i].kind = CUPTI_ACTIVITY_KIND_MEMORY_POOL;
		pools[i].memoryPoolOperationType = ops[i];
		pools[i].memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
		pools[i].address = 0x7e0000000000, pools[i].size = 1 << 21;
		pools[i].timestamp = 1700 + (uint64_t)i;
		add(&pools[i]);
	}
	api_rt.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
	api_rt.start = 900, api_rt.end = 950, api_rt.correlationId = 5, api_rt.threadId = 11;
	api_rt.returnValue = 2;
	add(&api_rt);
	api_drv = api_rt;
	api_drv.kind = CUPTI_ACTIVITY_KIND_DRIVER;
	api_drv.correlationId = 8;
	add(&api_drv);
}

static struct gp_host_ev host_ev(uint8_t type, const char *name)
{
	struct gp_host_ev ev = { .ts = 2000, .tid = 11, .type = type, .id = 3 };

	ev.name_len = (uint16_t)strlen(name);
	memcpy(ev.name, name, ev.name_len);
	return ev;
}

static void host_events(struct gp_writer_ctx *w)
{
	struct gp_host_ev evs[10];
	size_t n = 0;

	evs[n] = host_ev(GP_HEV_PUSH, "fwd:layer");
	evs[n].flags = GP_HEVF_HAS_CATEGORY | GP_HEVF_HAS_COLOR | GP_HEVF_HAS_PAYLOAD;
	evs[n].category = 2, evs[n].color = 0xff00ff00, evs[n++].a = 9;
	evs[n++] = host_ev(GP_HEV_POP, "");
	evs[n++] = host_ev(GP_HEV_START, "bwd:layer");
	evs[n++] = host_ev(GP_HEV_END, "");
	evs[n++] = host_ev(GP_HEV_MARK, GP_TORCH_MEMORY_PREFIX "{\"allocated\":1,\"reserved\":2,\"device\":0}");
	evs[n++] = host_ev(GP_HEV_THREAD_NAME, "worker");
	evs[n] = host_ev(GP_HEV_OOM, "");
	evs[n].flags = GP_HEVF_HAS_MEMINFO, evs[n].a = 1 << 30, evs[n].result = 2;
	evs[n].b = 1, evs[n++].c = 2;
	evs[n] = host_ev(GP_HEV_ALLOC, "");
	evs[n].api = 1, evs[n].a = 0x7d0000000000, evs[n].b = 256, evs[n].c = 7;
	evs[n++].flags = GP_HEVF_HAS_STREAM | GP_HEVF_ASYNC;
	evs[n] = host_ev(GP_HEV_FREE, "");
	evs[n].api = 2, evs[n++].a = 0x7d0000000000;
	gp_decode_host_events(w, evs, n);
}

/* What the PyTorch allocator hook hands over (torch_alloc.h), as
 * torch_alloc.c queues it: the event in the name's bytes. */
static struct gp_host_ev torch_ev(uint16_t type, uint64_t addr, uint64_t bytes, uint64_t ts)
{
	struct gp_ta_event e = { .version = GP_TA_VERSION, .type = type, .ts = ts, .addr = addr,
				 .bytes = bytes, .requested = bytes ? bytes - 100 : 1000, .stream = 0x5000,
				 .tid = 12, .device = 0 };
	struct gp_host_ev ev = { .ts = ts, .tid = 12, .type = GP_HEV_TORCH };

	if (type == GP_TA_OOM || type == GP_TA_ATTACH)
		e.allocated = 1 << 20, e.reserved = 2 << 20, e.free = 4096, e.stack = 1;
	ev.name_len = sizeof(e);
	memcpy(ev.name, &e, sizeof(e));
	return ev;
}

static void torch_events(struct gp_writer_ctx *w)
{
	struct gp_host_ev evs[12];
	size_t n = 0;
	/* two whole frames and one cut off by the queue's bound */
	static const char frames[] = "t.py\03742\037forward\036/lib/m\\\"x.py\0377\037<lambda>\036cut\0379";

	evs[n++] = torch_ev(GP_TA_ATTACH, 0, 0, 2100);
	evs[n] = host_ev(GP_HEV_TORCH_STACK, "");
	evs[n].id = 1, evs[n].name_len = sizeof(frames) - 1;
	memcpy(evs[n++].name, frames, sizeof(frames) - 1);
	evs[n++] = torch_ev(GP_TA_SEGMENT_ALLOC, 0x7c0000000000, 2 << 20, 2200);
	evs[n] = torch_ev(GP_TA_ALLOC, 0x7c0000000000, 1024, 2300);
	((struct gp_ta_event *)evs[n++].name)->stack = 1;
	evs[n] = torch_ev(GP_TA_ALLOC, 0x7c0000000400, 512, 2310);
	((struct gp_ta_event *)evs[n++].name)->flags = GP_TA_F_SIZE_GUESSED;
	evs[n++] = torch_ev(GP_TA_FREE, 0x7c0000000000, 0, 2400);
	evs[n++] = torch_ev(GP_TA_FREE, 0x7c0000009000, 0, 2410); /* never allocated */
	evs[n++] = torch_ev(GP_TA_OOM, 0, 22 << 20, 2500);
	evs[n++] = torch_ev(GP_TA_SEGMENT_MAP, 0x7b0000000000, 20 << 20, 2600);
	evs[n++] = torch_ev(GP_TA_SEGMENT_UNMAP, 0x7b0000000000, 20 << 20, 2700);
	evs[n++] = torch_ev(GP_TA_SEGMENT_FREE, 0x7c0000000000, 2 << 20, 2800);
	evs[n] = torch_ev(GP_TA_FREE, 0, 0, 2900);
	((struct gp_ta_event *)evs[n++].name)->version = 0; /* another hook's: bad */
	gp_decode_host_events(w, evs, n);
}

/* Lines of the trace that hold each of these strings: the values the
 * decoders computed (sizes of frees, the counter, the stack's frames). */
static void check_values(const char *path)
{
	static const char *const want[] = {
		"\"frames\":[[\"t.py\",42,\"forward\"],[\"/lib/m\\\\\\\"x.py\",7,\"<lambda>\"]]",
		"\"name\":\"torch.free\",\"cat\":\"memory\",\"pid\":4242,\"tid\":12,\"ts\":0.400,\"s\":\"t\","
		"\"args\":{\"addr\":\"0x7c0000000000\",\"bytes\":1024,",
		"\"ts\":0.410,\"s\":\"t\",\"args\":{\"addr\":\"0x7c0000009000\",\"requested\":1000,",
		"\"name\":\"PyTorch memory\",\"cat\":\"memory\",\"pid\":1000424200,\"tid\":0,\"ts\":0.400,"
		"\"args\":{\"allocated\":1049088,\"reserved\":4194304}",
		"\"stream\":\"0x5000\",\"stack\":1}",
		"\"requested\":412,\"device\":0,\"stream\":\"0x5000\",\"guessed\":true}",
		/* a module's globals on its context's device */
		"\"pid\":1000424201,\"tid\":0,\"ts\":1.450,\"s\":\"t\",\"args\":{\"addr\":\"0x7d0000000000\","
		"\"bytes\":555,\"kind\":\"device_static\",\"device\":1,",
		"\"name\":\"gpuprof.device\",\"cat\":\"gpuprof\",\"pid\":1000424201,",
	};
	/* a device the process never used: nothing of it */
	static const char *const unwanted[] = { "Unused GPU", "\"pid\":1000424202" };
	gzFile g = gzopen(path, "rb");
	static char line[1 << 16];
	int found[N(want)] = { 0 };

	CHECK(g != NULL);
	if (!g)
		return;
	while (gzgets(g, line, sizeof(line))) {
		for (size_t i = 0; i < N(want); i++)
			found[i] |= strstr(line, want[i]) != NULL;
		for (size_t i = 0; i < N(unwanted); i++) {
			if (strstr(line, unwanted[i]))
				CHECK_FAILED_("a line holds %s: %s", unwanted[i], line);
			check_count++;
		}
	}
	gzclose(g);
	for (size_t i = 0; i < N(want); i++) {
		if (!found[i])
			CHECK_FAILED_("no line holds %s\n", want[i]);
		check_count++;
	}
}

/* ---- checking ---- */

static int type_ok(struct json_object *v, int type)
{
	switch (type) {
	case T_U64: return json_object_is_type(v, json_type_int) && json_object_get_int64(v) >= 0;
	case T_I64: return json_object_is_type(v, json_type_int);
	case T_NUM: return json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double);
	case T_STR: return json_object_is_type(v, json_type_string);
	case T_HEX:
		return json_object_is_type(v, json_type_string) &&
		       strncmp(json_object_get_string(v), "0x", 2) == 0;
	case T_BOOL: return json_object_is_type(v, json_type_boolean);
	case T_ARR: return json_object_is_type(v, json_type_array);
	case T_OBJ: return json_object_is_type(v, json_type_object);
	}
	return 0;
}

static const char *str_of(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) ? json_object_get_string(v) : NULL;
}

/* The definition's event for a line: by its fixed name and ph, else by ph
 * and cat (variable names). */
static int event_of(struct json_object *o)
{
	const char *name = str_of(o, GP_T_NAME), *ph = str_of(o, GP_T_PH), *cat = str_of(o, GP_T_CAT);

	if (!ph || strlen(ph) != 1)
		return -1;
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < EV_COUNT; i++) {
			const struct event_def *e = &events[i];

			if (e->ph != ph[0] || (pass == 0) != (e->name[0] != '\0'))
				continue;
			if (pass == 0 && name && strcmp(name, e->name) == 0)
				return i;
			if (pass == 1 && cat && e->cat && strcmp(cat, e->cat) == 0)
				return i;
		}
	return -1;
}

static void check_event(struct json_object *o, int seen[EV_COUNT])
{
	const char *line = json_object_to_json_string(o);
	int ev = event_of(o);

	if (ev < 0) {
		CHECK_FAILED_("not an event of trace_format.def: %s\n", line);
		return;
	}
	seen[ev]++;
	const struct event_def *e = &events[ev];
	const char *cat = str_of(o, GP_T_CAT), *s = str_of(o, GP_T_S);
	if (!((!cat && !e->cat) || (cat && e->cat && strcmp(cat, e->cat) == 0)))
		CHECK_FAILED_("%s: cat is not %s's\n", line, e->id);
	if (!((!s && !e->scope) || (s && e->scope && s[0] == e->scope && !s[1])))
		CHECK_FAILED_("%s: s is not %s's\n", line, e->id);
	check_count += 2;
	json_object_object_foreach(o, key, val) {
		size_t i = 0;

		while (i < N(tops) && strcmp(tops[i].key, key) != 0)
			i++;
		if (i == N(tops) || !type_ok(val, tops[i].type))
			CHECK_FAILED_("%s: member %s not in trace_format.def as written\n", line, key);
		check_count++;
	}
	struct json_object *a = NULL;
	json_object_object_get_ex(o, GP_T_ARGS, &a);
	for (size_t i = 0; i < N(args); i++)
		if (args[i].event == ev && args[i].when == W_ALWAYS &&
		    !(a && json_object_object_get_ex(a, args[i].key, NULL)))
			CHECK_FAILED_("%s: lacks args.%s\n", line, args[i].key);
	if (!a)
		return;
	json_object_object_foreach(a, akey, aval) {
		size_t i = 0;

		while (i < N(args) && !(args[i].event == ev && strcmp(args[i].key, akey) == 0))
			i++;
		if (i == N(args) || !type_ok(aval, args[i].type))
			CHECK_FAILED_("%s: args.%s not in trace_format.def for %s as written\n", line,
				      akey, e->id);
		check_count++;
	}
}

static void check_file(const char *path, int seen[EV_COUNT])
{
	gzFile g = gzopen(path, "rb");
	static char line[1 << 16];

	CHECK(g != NULL);
	if (!g)
		return;
	while (gzgets(g, line, sizeof(line))) {
		size_t n = strlen(line);

		while (n && (line[n - 1] == '\n' || line[n - 1] == ','))
			line[--n] = '\0';
		if (!strcmp(line, "[") || !strcmp(line, "]"))
			continue;
		struct json_object *o = json_tokener_parse(line);
		CHECK(o != NULL);
		if (o)
			check_event(o, seen);
		json_object_put(o);
	}
	gzclose(g);
}

int main(void)
{
	char path[] = "/tmp/gpuprof-trace-format-XXXXXX";
	int fd = mkstemp(path);
	struct gp_writer_ctx w = { .host_pid = 4242 };
	int seen[EV_COUNT] = { 0 };

	CHECK(fd >= 0);
	CHECK_EQ_INT(gp_tw_open_fd(&w.tw, fd, 1), 0);
	CHECK_EQ_INT(gp_memc_create(&w.mc, 1024), 0);
	gp_tc_init(&w.torch);
	cupti_records();
	gp_decode_cupti_buffer(&w, NULL, 0);
	host_events(&w);
	gp_rec.ts_base = 2000;
	torch_events(&w);
	CHECK_EQ_INT(w.torch_alloc.events, 10);
	CHECK_EQ_INT(w.torch_alloc.guessed, 1);
	CHECK_EQ_INT(w.torch_alloc.unmatched_frees, 1);
	CHECK_EQ_INT(w.bad_records, 1);
	/* from the 1 MiB and 2 MiB there at attach */
	CHECK_EQ_INT(w.torch_alloc.allocated[0], (1 << 20) + 512);
	CHECK_EQ_INT(w.torch_alloc.reserved[0], 2 << 20);
	CHECK_EQ_INT(gp_tw_close(w.tw, NULL), 0);
	check_file(path, seen);
	check_values(path);
	unlink(path);

	/* every event but the writer thread's own (and PyTorch history) */
	static const int elsewhere[] = { EV_META, EV_WATERMARK, EV_ALLOC_CAPTURE, EV_DROPPED, EV_WINDOW, EV_DUMP, EV_OUTLINE, EV_CAP,
					 EV_END, EV_GPU_MEMORY, EV_TORCH_HISTORY };
	for (int i = 0; i < EV_COUNT; i++) {
		int skip = 0;

		for (size_t k = 0; k < N(elsewhere); k++)
			skip |= elsewhere[k] == i;
		if (!skip && !seen[i])
			CHECK_FAILED_("no %s event was written\n", events[i].id);
		check_count++;
	}
	gp_memc_destroy(w.mc);
	gp_u64set_free(&w.streams);
	gp_u64set_free(&w.threads);
	gp_strmap_free(&w.ranges);
	gp_strmap_free(&w.kernels);
	gp_u64map_free(&w.cb_live);
	gp_u64map_free(&w.torch_alloc.blocks);
	return CHECK_DONE();
}
