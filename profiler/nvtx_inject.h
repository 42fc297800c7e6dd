/* The recorder as NVTX's tool (nvtx_inject.c). */
#ifndef GPUPROF_NVTX_INJECT_H
#define GPUPROF_NVTX_INJECT_H

/* A domain handle given to the program points to one of these; domains and
 * registered strings are never freed (the program may use a handle after
 * destroying its domain), so the writer may read them at any time. */
struct gp_nvtx_domain {
	char *name; /* UTF-8, NUL-terminated */
};
/* Whether the calling thread is inside a module's forward range now. */
int gp_nvtx_in_module(void);

#endif
