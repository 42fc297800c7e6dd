// gpuprof's hook on PyTorch's caching allocator (native mode): every block
// handed out and given back, every segment, and PyTorch's own out-of-memory
// failures, handed to the recorder as they happen (profiler/torch_alloc.h).
//
// Built against the program's own torch (gpuprof_build.py), because what it
// reads, c10::cuda::CUDACachingAllocator's TraceEntry, is a C++ struct of
// that version. It is a trace tracker (attachAllocatorTraceTracker, the
// interface PyTorch's NCCL process group uses): PyTorch calls it under the
// allocator's lock, on the allocating thread, with or without the GIL, for
// every entry, whether or not its own memory history is on. It takes no GIL,
// calls nothing that could wait for the GIL, and hands events over.
//
// A block's size. An entry says the bytes asked for; the block PyTorch
// hands out can be larger (the request rounded, or a whole free block that
// was not worth splitting), and memory_allocated() counts blocks. The
// allocator adds the block to its active_bytes counter right after the
// ALLOC entry and changes it at no other time than after an ALLOC or a
// FREE_COMPLETED entry, each of which reaches this hook, under the same lock.
// So an ALLOC is held back until the device's next entry (or the resolver
// thread's look, below), whose active_bytes minus the ALLOC's own is exactly
// the block's size.
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>
#include <thread>

#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "gpuprof_stacks.h"
#include "torch_alloc.h"

namespace A = c10::cuda::CUDACachingAllocator;

namespace {

constexpr int kMaxDevices = 64; // the analyzer's too (AN_MAX_DEVICES)
// an ALLOC not followed by another entry for this long is resolved by the
// resolver thread, which looks every kResolvePeriod
constexpr uint64_t kResolveAfterNs = 50 * 1000 * 1000;
constexpr auto kResolvePeriod = std::chrono::milliseconds(100);

struct Device {
	std::mutex m; // taken inside the allocator's lock, never around a call into it
	bool pending = false;
	gp_ta_event alloc{};        // the ALLOC held back
	int64_t active_before = 0;  // active_bytes at that ALLOC's entry
	uint64_t seq = 0;           // entries seen
	bool attached = false;
	// its ATTACH not handed over yet: a device that held nothing when the
	// hook was attached is announced at its first entry, so a process's
	// trace names only the devices it used
	bool owed = false;
};

Device devices[kMaxDevices];
std::atomic<gp_ta_event_fn> emit{nullptr};
std::atomic<bool> stacks_on{false};
// Which blocks name their Python stack. With --stacks (stacks_on) every
// block of a thread that runs Python code. Without it, where no module
// names the block: a thread outside any module's forward range (in_module,
// the recorder's NVTX view) that runs Python code, e.g. the program's
// inputs, its loss, a script's own tensors, the optimizer's. Then, while a
// backward() runs, a block still without a stack (the autograd engine's
// threads run no Python code) takes the stack of the thread in backward()
// (gpuprof_alloc_backward_begin): the engine makes part of backward's memory
// outside any module's backward range (the loss's gradient, the output's
// first gradients). 0: no backward running.
std::atomic<uint32_t> backward_stack{0};
std::atomic<bool> stacks_readable{false}; // gp_stk_init succeeded
std::atomic<gp_ta_in_module_fn> in_module{nullptr};
std::atomic<bool> stopping{false}; // the resolver thread: end
std::atomic<uint64_t> guessed{0}, failures{0};
std::thread resolver;
std::mutex resolver_m;

uint64_t now_ns()
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint32_t this_tid()
{
	static thread_local uint32_t tid;
	if (!tid)
		tid = (uint32_t)syscall(SYS_gettid);
	return tid;
}

A::DeviceStats stats(int device)
{
	return A::get()->getDeviceStats((c10::DeviceIndex)device);
}

constexpr size_t kAggregate = 0; // StatType::AGGREGATE

int64_t active_bytes(int device)
{
	return stats(device).active_bytes[kAggregate].current;
}

// PyTorch's rounding of a request (CUDACachingAllocator.cpp, round_size,
// without roundup_power2_divisions): only for a size that could not be read.
uint64_t rounded(uint64_t size)
{
	return size < 512 ? 512 : (size + 511) / 512 * 512;
}

// What PyTorch's allocator asks cudaMalloc for a block of size bytes, the
// size its out-of-memory message names (get_allocation_size).
uint64_t segment_size(uint64_t size)
{
	const uint64_t small = 1 << 20, small_buffer = 2 << 20, min_large = 10 << 20,
		       large_buffer = 20 << 20, round_large = 2 << 20;
	if (size <= small)
		return small_buffer;
	if (size < min_large)
		return large_buffer;
	return (size + round_large - 1) / round_large * round_large;
}

void hand_over(const gp_ta_event& ev)
{
	gp_ta_event_fn fn = emit.load(std::memory_order_acquire);
	if (fn && fn(&ev) != 0)
		failures.fetch_add(1, std::memory_order_relaxed);
}

// The held-back ALLOC, now that active_bytes has moved past it. Under d.m.
void resolve(Device& d, int64_t active)
{
	int64_t size = active - d.active_before;
	d.pending = false;
	if (size < (int64_t)d.alloc.requested || size <= 0 || size % 512) {
		// not a block of this request: something moved the counter that
		// this hook did not see (should not happen: counted in the trace)
		d.alloc.bytes = rounded(d.alloc.requested);
		d.alloc.flags |= GP_TA_F_SIZE_GUESSED;
		guessed.fetch_add(1, std::memory_order_relaxed);
	} else {
		d.alloc.bytes = (uint64_t)size;
	}
	hand_over(d.alloc);
}

int ta_type(A::TraceEntry::Action a)
{
	switch (a) {
	case A::TraceEntry::ALLOC: return GP_TA_ALLOC;
	case A::TraceEntry::FREE_REQUESTED: return GP_TA_FREE;
	case A::TraceEntry::SEGMENT_ALLOC: return GP_TA_SEGMENT_ALLOC;
	case A::TraceEntry::SEGMENT_FREE: return GP_TA_SEGMENT_FREE;
	case A::TraceEntry::SEGMENT_MAP: return GP_TA_SEGMENT_MAP;
	case A::TraceEntry::SEGMENT_UNMAP: return GP_TA_SEGMENT_UNMAP;
	case A::TraceEntry::OOM: return GP_TA_OOM;
	// not written, but they come under the lock after the counters of the
	// entries before them moved: each resolves a held-back ALLOC
	case A::TraceEntry::FREE_COMPLETED:
	case A::TraceEntry::SNAPSHOT: return 0;
	// USER_DEFINED (annotations) and later additions: no lock, not ours
	default: return -1;
	}
}

bool in_a_module()
{
	gp_ta_in_module_fn fn = in_module.load(std::memory_order_relaxed);
	return fn && fn();
}

// The device's ATTACH: what PyTorch held on it when the watching began
// (allocated, reserved; 0 for one announced at its first entry). Under d.m.
void announce(Device& d, int dev, uint64_t ts, uint64_t allocated, uint64_t reserved)
{
	gp_ta_event ev{};
	ev.version = GP_TA_VERSION;
	ev.type = GP_TA_ATTACH;
	ev.ts = ts;
	ev.tid = this_tid();
	ev.device = dev;
	ev.stack = stacks_on.load(std::memory_order_relaxed) ? 1u : 0u;
	ev.allocated = allocated;
	ev.reserved = reserved;
	d.owed = false;
	hand_over(ev);
}

void on_entry(const A::TraceEntry& te)
{
	int type = ta_type(te.action_);
	int dev = (int)te.device_;
	if (type < 0 || dev < 0 || dev >= kMaxDevices)
		return;
	uint64_t ts = now_ns();
	Device& d = devices[dev];
	std::lock_guard<std::mutex> g(d.m);
	d.seq++;
	if (d.owed)
		announce(d, dev, ts, 0, 0); // it held nothing then, and every entry since came here
	int64_t active = -1;
	if (d.pending) {
		active = active_bytes(dev);
		resolve(d, active);
	}
	if (type == 0)
		return;
	gp_ta_event ev{};
	ev.version = GP_TA_VERSION;
	ev.type = (uint16_t)type;
	ev.ts = ts;
	ev.tid = this_tid();
	ev.device = dev;
	ev.stream = (uint64_t)(uintptr_t)te.stream_;
	switch (type) {
	case GP_TA_ALLOC:
		ev.addr = (uint64_t)te.addr_;
		ev.requested = (uint64_t)te.size_;
		if (stacks_on.load(std::memory_order_relaxed) ||
		    (stacks_readable.load(std::memory_order_relaxed) && !in_a_module()))
			ev.stack = gp_stk_current();
		if (!ev.stack)
			ev.stack = backward_stack.load(std::memory_order_relaxed);
		d.alloc = ev;
		d.active_before = active >= 0 ? active : active_bytes(dev);
		d.pending = true;
		return;
	case GP_TA_FREE:
		ev.addr = (uint64_t)te.addr_;
		ev.requested = (uint64_t)te.size_;
		break;
	case GP_TA_OOM: {
		A::DeviceStats s = stats(dev);
		ev.free = (uint64_t)te.addr_; // the entry's addr: free bytes per CUDA
		ev.requested = (uint64_t)te.size_;
		ev.bytes = segment_size((uint64_t)te.size_);
		ev.allocated = (uint64_t)s.allocated_bytes[kAggregate].current;
		ev.reserved = (uint64_t)s.reserved_bytes[kAggregate].current;
		break;
	}
	default: // segments
		ev.addr = (uint64_t)te.addr_;
		ev.bytes = (uint64_t)te.size_;
		break;
	}
	hand_over(ev);
}

// PyTorch calls its trackers inside its allocator: nothing may escape.
void tracker(const A::TraceEntry& te)
{
	try {
		on_entry(te);
	} catch (...) {
		failures.fetch_add(1, std::memory_order_relaxed);
	}
}

// Resolves the held-back ALLOC of device dev if it is still the same one
// once active_bytes was read (reading it waits for the allocator's lock, so
// the ALLOC's own counting is done by then); force: however young.
void resolve_late(int dev, bool force)
{
	Device& d = devices[dev];
	uint64_t seq;
	{
		std::lock_guard<std::mutex> g(d.m);
		if (!d.pending || (!force && now_ns() - d.alloc.ts < kResolveAfterNs))
			return;
		seq = d.seq;
	}
	int64_t active = active_bytes(dev);
	std::lock_guard<std::mutex> g(d.m);
	if (d.pending && d.seq == seq)
		resolve(d, active);
}

void resolver_main()
{
	while (!stopping.load()) {
		std::this_thread::sleep_for(kResolvePeriod);
		for (int dev = 0; dev < kMaxDevices && !stopping.load(); dev++) {
			if (!devices[dev].attached)
				continue;
			try {
				resolve_late(dev, false);
			} catch (...) {
				failures.fetch_add(1, std::memory_order_relaxed);
			}
		}
	}
}

// At exit, before the recorder writes its last events (its own exit handler
// was registered earlier, so runs later): the held-back ALLOCs. Entries
// after it (static destructors) still reach the recorder while it runs.
void at_exit()
{
	{
		std::lock_guard<std::mutex> g(resolver_m);
		stopping.store(true);
		if (resolver.joinable())
			resolver.join();
	}
	for (int dev = 0; dev < kMaxDevices; dev++) {
		if (!devices[dev].attached)
			continue;
		try {
			resolve_late(dev, true);
		} catch (...) {
			failures.fetch_add(1, std::memory_order_relaxed);
		}
	}
}

} // namespace

// Starts watching PyTorch's caching allocator on every device it knows:
// events to ev_fn, new Python stacks to stack_fn: every block's when stacks
// is nonzero, else those of blocks no module names (in_module_fn says when
// a thread is inside one; NULL: never) and of backward()'s callers.
// Call once CUDA is initialised (torch.cuda._lazy_call), before the program
// allocates: what was allocated before is said in the ATTACH events
// (allocated, reserved) and not otherwise seen. A device gets its ATTACH
// then if it held memory, else just before its first event: a device the
// process never allocates on gets none. 0, or -errno with a reason
// in why: -EAGAIN allocator not initialised, -ENOTSUP another allocator
// backend or a Python whose frames cannot be read, -EINVAL bad arguments or
// PyTorch refused.
extern "C" __attribute__((visibility("default"))) int gpuprof_alloc_attach(
	gp_ta_event_fn ev_fn, gp_ta_stack_fn stack_fn, gp_ta_in_module_fn in_module_fn, int stacks,
	char* why, size_t cap)
{
	static std::mutex attach_m;
	static bool attached = false; // once attached, for good
	if (!ev_fn || (stacks && !stack_fn) || !why || !cap)
		return -EINVAL;
	why[0] = '\0';
	std::lock_guard<std::mutex> g(attach_m);
	if (attached) {
		snprintf(why, cap, "already attached");
		return -EINVAL;
	}
	try {
		A::CUDAAllocator* a = A::get();
		if (!a || !a->initialized()) {
			snprintf(why, cap, "PyTorch's CUDA allocator is not initialised yet");
			return -EAGAIN;
		}
		std::string name = a->name();
		if (name != "native") {
			snprintf(why, cap, "PyTorch's allocator backend is %s, not its caching allocator",
				 name.c_str());
			return -ENOTSUP;
		}
		if (stacks) {
			int e = gp_stk_init(stack_fn, why, cap);
			if (e)
				return e; // may be asked again without stacks
			stacks_readable.store(true);
		} else if (stack_fn) {
			// where no module names a block; without it, no line for those
			char ignored[8];
			stacks_readable.store(gp_stk_init(stack_fn, ignored, sizeof(ignored)) == 0);
		}
		in_module.store(in_module_fn);
		stacks_on.store(stacks != 0);
		emit.store(ev_fn, std::memory_order_release);
		int n = (int)c10::cuda::device_count();
		if (n > kMaxDevices)
			n = kMaxDevices;
		// Every device is watched; one that holds nothing yet owes its
		// ATTACH until its first entry (a rank sees the host's every GPU
		// and uses one). The owed flag is set before the tracker can run.
		for (int dev = 0; dev < n; dev++) {
			std::lock_guard<std::mutex> g(devices[dev].m);
			devices[dev].attached = true;
			devices[dev].owed = true;
		}
		a->attachAllocatorTraceTracker(tracker);
		attached = true;
		// what the program had when the watching began, where it had any
		for (int dev = 0; dev < n; dev++) {
			A::DeviceStats s = stats(dev);
			uint64_t allocated = (uint64_t)s.allocated_bytes[kAggregate].current;
			uint64_t reserved = (uint64_t)s.reserved_bytes[kAggregate].current;
			std::lock_guard<std::mutex> g(devices[dev].m);
			if (devices[dev].owed && (allocated || reserved))
				announce(devices[dev], dev, now_ns(), allocated, reserved);
		}
		{
			std::lock_guard<std::mutex> g(resolver_m);
			resolver = std::thread(resolver_main);
		}
		std::atexit(at_exit);
		return 0;
	} catch (const std::exception& e) {
		snprintf(why, cap, "%s", e.what());
	} catch (...) {
		snprintf(why, cap, "unknown C++ exception");
	}
	emit.store(nullptr);
	return -EINVAL;
}

// backward() begins on the calling thread (GIL held; gpuprof_torch.py's
// wrapper): its Python stack stands, until gpuprof_alloc_backward_end, for
// the blocks without a stack of their own (backward_stack). Returns the stack
// it replaces, to hand back to gpuprof_alloc_backward_end (backward within
// backward, or two threads' backward at once: the later one's while both
// run). Another thread's blocks made meanwhile without a stack of their own
// take it too.
extern "C" __attribute__((visibility("default"))) uint32_t gpuprof_alloc_backward_begin(void)
{
	uint32_t prev = backward_stack.load(std::memory_order_relaxed);
	if (!stacks_readable.load(std::memory_order_relaxed))
		return prev;
	uint32_t id = gp_stk_current();
	if (id)
		backward_stack.store(id, std::memory_order_relaxed);
	return prev;
}

extern "C" __attribute__((visibility("default"))) void gpuprof_alloc_backward_end(uint32_t prev)
{
	backward_stack.store(prev, std::memory_order_relaxed);
}

// What went wrong so far: events the recorder did not take or that failed
// here (0), blocks whose size was guessed (1), and the stack table's
// counts (2 lookups, 3 new walks, 4 stacks, 5 dropped).
extern "C" __attribute__((visibility("default"))) uint64_t gpuprof_alloc_count(int what)
{
	struct gp_stk_counts c;
	switch (what) {
	case 0: return failures.load();
	case 1: return guessed.load();
	default: break;
	}
	gp_stk_get_counts(&c);
	switch (what) {
	case 2: return c.lookups;
	case 3: return c.new_keys;
	case 4: return c.stacks;
	case 5: return c.dropped;
	default: return 0;
	}
}
