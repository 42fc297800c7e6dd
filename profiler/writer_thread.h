/* The writer thread (writer_thread.c): decodes, encodes and writes
 * everything the program's threads handed over, and finishes the trace. */
#ifndef GPUPROF_WRITER_THREAD_H
#define GPUPROF_WRITER_THREAD_H

struct gp_trace_writer;
struct gp_flight;
/* Starts the writer on tw (handed over), flushing as the configuration
 * says (config.h); with a flight recorder (handed over; NULL: none), tw
 * writes into its ring (flight.h). 0 or -errno. */
int gp_writer_start(struct gp_trace_writer *tw, struct gp_flight *flight);
/* Flushes CUPTI, drains everything, writes the end event, closes the trace.
 * Waits at most timeout_ms for the writer, then abandons it. */
void gp_writer_stop(int clean, int timeout_ms);
/* In a signal handler, or on signals.c's finisher thread (a signal sent
 * from outside), as the program is about to die of sig: the writer
 * finishes the trace as gp_writer_stop does, its end saying the signal;
 * waits for it at most timeout_ms. 0, -ETIMEDOUT, or -EDEADLK on the
 * writer's own thread (or with no writer). Async-signal-safe. */
int gp_writer_finish_for_signal(int sig, int timeout_ms);
/* As the program ends without exit() (_exit, _Exit: exit_patch.h), on its
 * thread: the writer finishes the trace as gp_writer_stop does (a clean
 * end); waits for it at most timeout_ms. As above. */
int gp_writer_finish_for_exit(int timeout_ms);
/* Waits at most timeout_ms for a trace that another thread is having
 * finished (gp_writer_stop, the calls above): 0 or -ETIMEDOUT.
 * Async-signal-safe. */
int gp_writer_wait_finished(int timeout_ms);
/* For a signal the program handles, in its handler or on the finisher
 * thread: the writer makes one whole
 * flush now (CUPTI's completed buffers, host events, the file); waits for
 * it at most timeout_ms. As above. */
int gp_writer_flush_now(int timeout_ms);

#endif
