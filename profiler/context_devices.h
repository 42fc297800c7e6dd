/* CUDA contexts' devices (context_devices.c). */
#ifndef GPUPROF_CONTEXT_DEVICES_H
#define GPUPROF_CONTEXT_DEVICES_H

#include <stdint.h>

/* A context was created (CUPTI's CUpti_ResourceData): its device noted. */
void gp_ctxdev_created(const void *resource_data);
/* The device of a CUPTI record's context id (0: the record names none): 1
 * and *device, or 0 if not known; a record naming no known context is on
 * the one device with contexts, where the process has one. */
int gp_ctxdev_device(uint32_t context_id, uint32_t *device);

#endif
