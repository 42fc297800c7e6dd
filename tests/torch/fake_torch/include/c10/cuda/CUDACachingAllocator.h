// A stand-in for torch's c10/cuda/CUDACachingAllocator.h, for
// tests/torch/test_alloc_hook.py: only what gpuprof's allocator hook
// (profiler/python/gpuprof_alloc.cpp) uses, with the names and types of
// torch 2.11's header, so that the hook compiles against it unchanged.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include <cuda_runtime_api.h>

namespace c10 {
using DeviceIndex = int8_t;
namespace cuda {
namespace CUDACachingAllocator {

struct Stat {
	int64_t current = 0, peak = 0, allocated = 0, freed = 0;
};
using StatArray = std::array<Stat, 3>;

struct DeviceStats {
	StatArray allocation, segment, active, inactive_split;
	StatArray allocated_bytes, reserved_bytes, active_bytes, inactive_split_bytes, requested_bytes;
};

struct TraceEntry {
	enum Action {
		ALLOC, FREE_REQUESTED, FREE_COMPLETED, SEGMENT_ALLOC, SEGMENT_FREE, SEGMENT_MAP,
		SEGMENT_UNMAP, SNAPSHOT, OOM, USER_DEFINED
	};
	Action action_;
	c10::DeviceIndex device_;
	size_t addr_;
	cudaStream_t stream_;
	size_t size_;
};

using AllocatorTraceTracker = std::function<void(const TraceEntry&)>;

class CUDAAllocator {
public:
	virtual ~CUDAAllocator() = default;
	virtual bool initialized() = 0;
	virtual std::string name() = 0;
	virtual DeviceStats getDeviceStats(c10::DeviceIndex device) = 0;
	virtual void attachAllocatorTraceTracker(AllocatorTraceTracker tracker) = 0;
};

CUDAAllocator* get();

} // namespace CUDACachingAllocator
} // namespace cuda
} // namespace c10
