/* The recorder's configuration, read once (config.h). The recorder's only
 * caller of getenv (tests/recorder/check_getenv.py holds it to that): the
 * variables' names, defaults and bounds are exporters/env_vars.def's. */
#include "config.h"

#include "dump_when.h"

#include "env_vars.h"
#include "state.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct gp_rec_config config;
static int load_result;
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

/* A whole number from the environment within [min, max]: 0 and *out;
 * -ENOENT when unset or empty; -EINVAL when not such a number. Says nothing. */
static int env_number(const char *name, size_t min, size_t max, size_t *out)
{
	const char *v = getenv(name);
	if (!v || !*v)
		return -ENOENT;
	char *end;
	errno = 0;
	unsigned long long x = strtoull(v, &end, 10);
	if (errno || *end || x < min || x > max)
		return -EINVAL;
	*out = (size_t)x;
	return 0;
}

/* The same, or dflt when it is unset; out of [min, max] or not a number:
 * dflt, said on stderr. */
static size_t env_size(const char *name, size_t dflt, size_t min, size_t max)
{
	size_t x;
	int err = env_number(name, min, max, &x);
	if (err == -EINVAL)
		gp_rec_say("ignoring %s=%s (expected %zu..%zu)", name, getenv(name), min, max);
	return err ? dflt : x;
}

/* A NUM variable of env_vars.def (GP_ENV_<ID>), with its default and bounds. */
#define ENV_NUM(name) env_size(name, name##_DEFAULT, name##_MIN, name##_MAX)

/* A plain number from the environment, at most max: 0, or -1 when unset
 * or anything else (said nowhere: these are mostly the program's
 * variables, not ours). */
static int env_plain(const char *name, size_t max, size_t *out)
{
	const char *v = getenv(name);
	if (!v || *v < '0' || *v > '9')
		return -1;
	return env_number(name, 0, max, out) ? -1 : 0;
}

/* A count from name (at most 2^24), else from fallback where one is given;
 * -1 when neither is a plain number: the launchers' RANK, WORLD_SIZE... */
static long long env_count_or(const char *name, const char *fallback)
{
	size_t x;
	if (env_plain(name, 1u << 24, &x) == 0)
		return (long long)x;
	if (fallback && env_plain(fallback, 1u << 24, &x) == 0)
		return (long long)x;
	return -1;
}

/* A copy of a variable, owned by the configuration: 0 with *out NULL when
 * unset, or -ENOMEM. */
static int env_copy(const char *name, const char **out)
{
	const char *v = getenv(name);
	char *copy = NULL;
	if (v && !(copy = strdup(v)))
		return -ENOMEM;
	*out = copy;
	return 0;
}

static const struct {
	const char *name;
	unsigned bit;
} part_names[] = {
	{ "kernels", GP_REC_KERNELS }, { "copies", GP_REC_COPIES },   { "api", GP_REC_API },
	{ "launches", GP_REC_LAUNCHES }, { "oom", GP_REC_OOM },       { "nvtx", GP_REC_NVTX },
	{ "pools", GP_REC_POOLS },     { "statics", GP_REC_STATICS }, { "memory", GP_REC_MEMORY },
	{ "all", GP_REC_ALL },         { "none", 0 },
};
#define N_PART_NAMES (sizeof(part_names) / sizeof(part_names[0]))

unsigned gp_rec_parts_parse(const char *what, const char *v)
{
	unsigned p = 0;
	const char *s = v;
	while (*s) {
		size_t len = strcspn(s, ",");
		size_t i;
		for (i = 0; i < N_PART_NAMES; i++)
			if (strlen(part_names[i].name) == len && strncmp(s, part_names[i].name, len) == 0)
				break;
		if (i < N_PART_NAMES)
			p |= part_names[i].bit;
		else if (len)
			gp_rec_say("%s: unknown part '%.*s' ignored (kernels, copies, api, launches, "
				   "oom, nvtx, pools, statics, memory, all)", what, (int)len, s);
		s += len;
		if (*s == ',')
			s++;
	}
	return p;
}

void gp_rec_parts_names(unsigned parts, char *out, size_t cap)
{
	size_t n = 0;
	if (!cap)
		return;
	out[0] = '\0';
	/* single parts only: the table's last two are "all" and "none" */
	for (size_t i = 0; i + 2 < N_PART_NAMES; i++) {
		if (!(parts & part_names[i].bit))
			continue;
		int w = snprintf(out + n, cap - n, "%s%s", n ? "," : "", part_names[i].name);
		if (w < 0 || (size_t)w >= cap - n)
			return;
		n += (size_t)w;
	}
	if (!n)
		snprintf(out, cap, "none");
}

/* GPUPROF_RECORD's parts, as the mode has them by default. */
static unsigned record_parts(const char *mode)
{
	const char *v = getenv(GP_ENV_RECORD);
	unsigned p = (!v || !*v) ? GP_REC_ALL : gp_rec_parts_parse(GP_ENV_RECORD, v) & GP_REC_ALL;
	/* PyTorch's tensor mode makes thousands of stream-ordered allocations a
	 * step: by default they come from the API callbacks, without CUPTI's
	 * costly pool records (api_callbacks.c); GPUPROF_RECORD=all has both. */
	if ((!v || !*v) && mode && strcmp(mode, "tensor") == 0)
		p &= ~(unsigned)GP_REC_POOLS;
	return p;
}

static void load(void)
{
	struct gp_rec_config *c = &config;
	size_t job_start;

	if (env_copy(GP_ENV_OUTPUT, &c->output) || env_copy(GP_ENV_RUN_DIR, &c->run_dir) ||
	    env_copy(GP_ENV_ROOT_PID, &c->root_pid) || env_copy(GP_ENV_MODE, &c->mode)) {
		load_result = -ENOMEM;
		return;
	}
	c->rank = env_count_or("RANK", "SLURM_PROCID");
	c->world_size = env_count_or("WORLD_SIZE", "SLURM_NTASKS");
	c->local_rank = env_count_or("LOCAL_RANK", "SLURM_LOCALID");
	c->local_world_size = env_count_or("LOCAL_WORLD_SIZE", NULL);
	c->has_job_start = env_plain(GP_ENV_JOB_START_UNIX_NS, SIZE_MAX, &job_start) == 0;
	c->job_start_unix_ns = c->has_job_start ? (uint64_t)job_start : 0;

	/* said in this order when wrong: what is recorded, then the sizes */
	c->parts = record_parts(c->mode);
	const char *patch = getenv(GP_ENV_PATCH);
	c->patch = !(patch && strcmp(patch, "0") == 0);
	c->host_events = ENV_NUM(GP_ENV_HOST_EVENTS);
	c->buffer_bytes = ENV_NUM(GP_ENV_BUFFER_MB) << 20;
	const char *flush = getenv(GP_ENV_FLUSH);
	c->flush = flush && strcmp(flush, "forced") == 0 ? GP_CUPTI_FLUSH_FORCED
		   : flush && strcmp(flush, "none") == 0 ? GP_CUPTI_FLUSH_NONE
							  : GP_CUPTI_FLUSH_DEFAULT;
	c->flush_ms = (int)ENV_NUM(GP_ENV_FLUSH_MS);
	c->cupti_flush_ms = (int)ENV_NUM(GP_ENV_CUPTI_FLUSH_MS);
	c->window_s = (int)ENV_NUM(GP_ENV_WINDOW_S);
	c->ring_bytes = ENV_NUM(GP_ENV_RING_MB) << 20;
	c->seal_ms = (int)ENV_NUM(GP_ENV_SEAL_MS);
	const char *at = getenv(GP_ENV_DUMP_AT), *steps = getenv(GP_ENV_DUMP_STEPS);
	if (at && *at && gp_parse_dump_at(at, &c->dump_at_bytes, &c->dump_at_permille))
		gp_rec_say("ignoring %s=%s (expected bytes, as 60G, or a share of the device, as 90%%)",
			   GP_ENV_DUMP_AT, at);
	if (steps && *steps && gp_parse_dump_steps(steps, &c->dump_step_first, &c->dump_step_last))
		gp_rec_say("ignoring %s=%s (expected steps A-B, 1 <= A <= B)", GP_ENV_DUMP_STEPS, steps);
	const char *cap = getenv(GP_ENV_TRACE_CAP);
	c->trace_cap_bytes = GP_TRACE_CAP_DEFAULT_BYTES;
	if (cap && *cap && gp_parse_trace_cap(cap, &c->trace_cap_bytes)) {
		c->trace_cap_bytes = GP_TRACE_CAP_DEFAULT_BYTES;
		gp_rec_say("ignoring %s=%s (expected a size of at least 64KiB, as 1GiB, or off)", GP_ENV_TRACE_CAP,
			   cap);
	}
	c->exit_wait_ms = (int)ENV_NUM(GP_ENV_EXIT_WAIT_MS);
	c->signal_wait_ms = (int)ENV_NUM(GP_ENV_SIGNAL_WAIT_MS);
	c->signals = ENV_NUM(GP_ENV_SIGNALS) != 0;
}

int gp_rec_config_load(void)
{
	pthread_once(&load_once, load);
	return load_result;
}

const struct gp_rec_config *gp_rec_config(void)
{
	return &config;
}
