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

int main(void)
{
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
