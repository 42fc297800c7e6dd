// A stand-in for torch's libc10_cuda (test_alloc_hook.py): a caching
// allocator that makes no memory, only its trace entries and counters, in
// PyTorch's order (CUDACachingAllocator.cpp): an ALLOC entry comes before
// its block is added to allocated_bytes and active_bytes; FREE_REQUESTED
// comes after allocated_bytes dropped; FREE_COMPLETED before active_bytes
// drops; all under one recursive lock per device, on the caller's thread.
// The test drives it through the fake_* calls.
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>

#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

namespace A = c10::cuda::CUDACachingAllocator;

namespace {

struct Device {
	std::recursive_mutex m;
	A::DeviceStats s;
};

class Fake : public A::CUDAAllocator {
public:
	std::vector<Device*> devices;
	std::vector<A::AllocatorTraceTracker> trackers;
	std::string backend = "native";
	bool initialized() override { return !devices.empty(); }
	std::string name() override { return backend; }
	A::DeviceStats getDeviceStats(c10::DeviceIndex d) override
	{
		if (d < 0 || (size_t)d >= devices.size())
			throw std::out_of_range("Invalid device argument");
		std::lock_guard<std::recursive_mutex> g(devices[d]->m);
		return devices[d]->s;
	}
	void attachAllocatorTraceTracker(A::AllocatorTraceTracker t) override
	{
		if (backend != "native")
			throw std::runtime_error("not supported by this backend");
		trackers.push_back(std::move(t));
	}
	void trace(A::TraceEntry::Action a, int d, size_t addr, size_t size)
	{
		A::TraceEntry te{ a, (c10::DeviceIndex)d, addr, (cudaStream_t)0x5000, size };
		for (auto& t : trackers)
			t(te);
	}
};

Fake fake;

void add(A::StatArray& s, int64_t n)
{
	s[0].current += n;
	if (s[0].current > s[0].peak)
		s[0].peak = s[0].current;
}

} // namespace

A::CUDAAllocator* A::get()
{
	return &fake;
}

c10::DeviceIndex c10::cuda::device_count() noexcept
{
	return (c10::DeviceIndex)fake.devices.size();
}

extern "C" {

void fake_init(int n)
{
	while ((int)fake.devices.size() < n)
		fake.devices.push_back(new Device);
}

void fake_backend(const char* name)
{
	fake.backend = name;
}

void fake_alloc(int d, size_t addr, size_t requested, size_t block)
{
	Device& dv = *fake.devices[d];
	std::lock_guard<std::recursive_mutex> g(dv.m);
	fake.trace(A::TraceEntry::ALLOC, d, addr, requested);
	add(dv.s.allocated_bytes, (int64_t)block);
	add(dv.s.active_bytes, (int64_t)block);
}

// from a thread that runs no Python code (the autograd engine's)
void fake_alloc_on_thread(int d, size_t addr, size_t requested, size_t block)
{
	std::thread t(fake_alloc, d, addr, requested, block);
	t.join();
}

// deferred: the block waits for another stream; fake_complete ends it
void fake_free(int d, size_t addr, size_t requested, size_t block, int deferred)
{
	Device& dv = *fake.devices[d];
	std::lock_guard<std::recursive_mutex> g(dv.m);
	add(dv.s.allocated_bytes, -(int64_t)block);
	fake.trace(A::TraceEntry::FREE_REQUESTED, d, addr, requested);
	if (!deferred) {
		fake.trace(A::TraceEntry::FREE_COMPLETED, d, addr, requested);
		add(dv.s.active_bytes, -(int64_t)block);
	}
}

void fake_complete(int d, size_t addr, size_t requested, size_t block)
{
	Device& dv = *fake.devices[d];
	std::lock_guard<std::recursive_mutex> g(dv.m);
	fake.trace(A::TraceEntry::FREE_COMPLETED, d, addr, requested);
	add(dv.s.active_bytes, -(int64_t)block);
}

void fake_segment(int d, size_t addr, size_t size, int release, int mapped)
{
	Device& dv = *fake.devices[d];
	std::lock_guard<std::recursive_mutex> g(dv.m);
	add(dv.s.reserved_bytes, release ? -(int64_t)size : (int64_t)size);
	A::TraceEntry::Action a = mapped ? (release ? A::TraceEntry::SEGMENT_UNMAP : A::TraceEntry::SEGMENT_MAP)
					 : (release ? A::TraceEntry::SEGMENT_FREE : A::TraceEntry::SEGMENT_ALLOC);
	fake.trace(a, d, addr, size);
}

// PyTorch's OOM entry: addr is the device's free bytes, size the rounded request
void fake_oom(int d, size_t free_bytes, size_t size)
{
	Device& dv = *fake.devices[d];
	std::lock_guard<std::recursive_mutex> g(dv.m);
	fake.trace(A::TraceEntry::OOM, d, free_bytes, size);
}

// entries the hook does not write: a snapshot (under the lock), an annotation
void fake_other(int d, int user_defined)
{
	Device& dv = *fake.devices[d];
	std::lock_guard<std::recursive_mutex> g(dv.m);
	fake.trace(user_defined ? A::TraceEntry::USER_DEFINED : A::TraceEntry::SNAPSHOT, d, 0, 0);
}

// active_bytes moved by something no entry tells of (never in PyTorch)
void fake_bump_active(int d, int64_t n)
{
	Device& dv = *fake.devices[d];
	std::lock_guard<std::recursive_mutex> g(dv.m);
	add(dv.s.active_bytes, n);
}
}
