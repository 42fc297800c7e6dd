/* A stand-in for CUDA's cuda_runtime_api.h (test_alloc_hook.py). */
#pragma once
typedef struct CUstream_st *cudaStream_t;
