/* The environment `gpuprof --trace` gives a Python (PyTorch) program:
 * the mode, gpuprof's Python hooks on PYTHONPATH, and in tensor mode
 * PyTorch's allocator switched to cudaMallocAsync so that every tensor is a
 * CUDA allocation the recorder sees. */
#ifndef GPUPROF_TORCH_ENV_H
#define GPUPROF_TORCH_ENV_H

#include <stdbool.h>
#include <stddef.h>

enum gp_mode { GP_MODE_AUTO, GP_MODE_CUDA, GP_MODE_TENSOR, GP_MODE_NATIVE };

/* "tensor"/"native"/"cuda" -> mode; -EINVAL otherwise. */
int gp_mode_parse(const char *s, enum gp_mode *out);
const char *gp_mode_name(enum gp_mode m);

/* True when argv0 runs Python: a .py file, an executable named python*, or a
 * script whose #! line names python (torchrun, accelerate, deepspeed ...),
 * found on PATH as it will run (gp_trace_find_program). */
bool gp_runs_python(const char *argv0);

/* PYTORCH_CUDA_ALLOC_CONF for tensor mode, keeping the user's settings:
 * writes "backend:cudaMallocAsync[,user options]" to out. For each user
 * option that the cudaMallocAsync backend ignores or that conflicts, appends
 * a sentence to warn (NUL-terminated, "" if none). 0 or -ENAMETOOLONG. */
int gp_tensor_alloc_conf(const char *user, char *out, size_t cap, char *warn, size_t wcap);

/* Sets GPUPROF_MODE, PYTHONPATH (python_dir first), GPUPROF_OPS,
 * GPUPROF_TORCH_HISTORY and, in tensor mode, the allocator configuration;
 * prints what it changed. 0 or -errno. */
int gp_torch_env_export(enum gp_mode mode, bool ops, bool history, bool stacks,
			const char *python_dir);

#endif
