// A stand-in for torch's c10/cuda/CUDAFunctions.h (test_alloc_hook.py).
#pragma once

#include <c10/cuda/CUDACachingAllocator.h>

namespace c10 {
namespace cuda {
DeviceIndex device_count() noexcept;
} // namespace cuda
} // namespace c10
