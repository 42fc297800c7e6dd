/* The child process's trace name (exporters/trace_names.h): what the
 * recorder writes, the launcher and compare find again, and nothing else. */
#include "check.h"
#include "trace_names.h"

#include <errno.h>
#include <string.h>

static void round_trip(const char *out_name, pid_t pid, const char *want)
{
	char buf[256];

	CHECK_EQ_INT(gp_child_trace_path(buf, sizeof(buf), out_name, pid), 0);
	CHECK(strcmp(buf, want) == 0);
	CHECK_EQ_INT(gp_child_trace_pid(out_name, buf), pid);
}

/* A dump's name, as the flight recorder makes it, is told apart from a
 * process's trace. */
static void dumps(void)
{
	char buf[256];

	CHECK_EQ_INT(gp_dump_trace_path(buf, sizeof(buf), "/runs/rank0.77.json.gz", 3), 0);
	CHECK(strcmp(buf, "/runs/rank0.77.dump3.json.gz") == 0);
	CHECK(gp_is_dump_trace_name("rank0.77.dump3.json.gz"));
	CHECK(gp_is_dump_trace_name("proc.host.9.dump12.json.gz"));
	CHECK(gp_is_dump_trace_name("plain.dump1"));
	CHECK(!gp_is_dump_trace_name("rank0.77.json.gz"));
	CHECK(!gp_is_dump_trace_name("proc.dump.7.json.gz"));
	CHECK(!gp_is_dump_trace_name("x.dump.json.gz"));
}

int main(void)
{
	dumps();
	char small[12];

	round_trip("run.json.gz", 4242, "run.4242.json.gz");
	round_trip("run.trace", 7, "run.trace.7");
	round_trip("plain", 2147483647, "plain.2147483647");
	/* nothing but the suffix: not a stem, the pid goes at the end */
	round_trip(".json.gz", 12, ".json.gz.12");
	/* a path: only the file name's end counts */
	{
		char buf[256];

		CHECK_EQ_INT(gp_child_trace_path(buf, sizeof(buf), "/tmp/a.b/run.json.gz", 9), 0);
		CHECK(strcmp(buf, "/tmp/a.b/run.9.json.gz") == 0);
	}
	CHECK_EQ_INT(gp_child_trace_path(small, sizeof(small), "run.json.gz", 4242), -ENAMETOOLONG);
	CHECK_EQ_INT(gp_child_trace_path(small, sizeof(small), "run.json", 4242), -ENAMETOOLONG);

	/* the root trace and other files beside it are nobody's child */
	CHECK_EQ_INT(gp_child_trace_pid("run.json.gz", "run.json.gz"), -1);
	CHECK_EQ_INT(gp_child_trace_pid("run.json.gz", "run..json.gz"), -1);
	CHECK_EQ_INT(gp_child_trace_pid("run.json.gz", "run.0.json.gz"), -1);
	CHECK_EQ_INT(gp_child_trace_pid("run.json.gz", "run.012.json.gz"), -1); /* %ld has no leading 0 */
	CHECK_EQ_INT(gp_child_trace_pid("run.json.gz", "run.12x.json.gz"), -1);
	CHECK_EQ_INT(gp_child_trace_pid("run.json.gz", "run.12.json"), -1);
	CHECK_EQ_INT(gp_child_trace_pid("run.json.gz", "run.12.json.gz.tmp"), -1);
	CHECK_EQ_INT(gp_child_trace_pid("run.json.gz", "runx.12.json.gz"), -1);
	CHECK_EQ_INT(gp_child_trace_pid("run.json.gz", "run.12"), -1);
	CHECK_EQ_INT(gp_child_trace_pid("run.json.gz", "run.2147483648.json.gz"), -1); /* past a pid_t */
	CHECK_EQ_INT(gp_child_trace_pid("run.trace", "run.trace.5.json.gz"), -1);
	CHECK_EQ_INT(gp_child_trace_pid("run.trace", "run.trace.5"), 5);
	return CHECK_DONE();
}
