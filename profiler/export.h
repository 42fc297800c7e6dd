/* What the recorder exports: the entry points CUDA and NVTX look up
 * (InitializeInjection, inject.c; InitializeInjectionNvtx2, nvtx_inject.c)
 * and the gpuprof_* calls of the PyTorch hooks and bench/ (inject.c,
 * torch_alloc.c). Everything else, the static libraries inside included,
 * is hidden (profiler/CMakeLists.txt). */
#ifndef GPUPROF_EXPORT_H
#define GPUPROF_EXPORT_H

#define GP_EXPORT __attribute__((visibility("default")))

#endif
