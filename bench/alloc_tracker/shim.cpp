// A trace tracker on PyTorch's caching allocator (bench/alloc_tracker/run.sh):
// counts the entries it is handed by action, sums their sizes (tensors:
// ALLOC - FREE_REQUESTED; segments: SEGMENT_ALLOC/MAP - SEGMENT_FREE/UNMAP)
// with running peaks, and can time itself. PyTorch calls a tracker under the
// allocator's lock and asks that it call nothing of PyTorch: this one only
// adds. C entry points, for ctypes.
#include <c10/cuda/CUDACachingAllocator.h>

#include <atomic>
#include <cstdint>
#include <ctime>

namespace A = c10::cuda::CUDACachingAllocator;

static std::atomic<long> counts[16];
static std::atomic<long long> cur{0}, peak{0}, seg{0}, segpeak{0};
static std::atomic<long long> ns_in_callback{0};

static void add(std::atomic<long long>& c, std::atomic<long long>& p, long long d)
{
	long long v = c.fetch_add(d) + d, q = p.load();

	while (v > q && !p.compare_exchange_weak(q, v)) {
	}
}

static long long ns(const struct timespec& t)
{
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

extern "C" int probe_attach(int timed)
{
	A::attachAllocatorTraceTracker([timed](const A::TraceEntry& te) {
		struct timespec a, b;
		int k = (int)te.action_;
		long long s = (long long)te.size_;

		if (timed)
			clock_gettime(CLOCK_MONOTONIC, &a);
		if (k >= 0 && k < 16)
			counts[k].fetch_add(1, std::memory_order_relaxed);
		switch (te.action_) {
		case A::TraceEntry::ALLOC:
			add(cur, peak, s);
			break;
		case A::TraceEntry::FREE_REQUESTED:
			cur.fetch_sub(s);
			break;
		case A::TraceEntry::SEGMENT_ALLOC:
		case A::TraceEntry::SEGMENT_MAP:
			add(seg, segpeak, s);
			break;
		case A::TraceEntry::SEGMENT_FREE:
		case A::TraceEntry::SEGMENT_UNMAP:
			seg.fetch_sub(s);
			break;
		default:
			break;
		}
		if (timed) {
			clock_gettime(CLOCK_MONOTONIC, &b);
			ns_in_callback += ns(b) - ns(a);
		}
	});
	return 0;
}

/* how many entries of action a */
extern "C" long probe_count(int a)
{
	return a >= 0 && a < 16 ? counts[a].load() : -1;
}

/* 0 tensors now, 1 their peak, 2 segments now, 3 their peak, 4 ns in the callback */
extern "C" long long probe_val(int w)
{
	switch (w) {
	case 0: return cur.load();
	case 1: return peak.load();
	case 2: return seg.load();
	case 3: return segpeak.load();
	default: return ns_in_callback.load();
	}
}
