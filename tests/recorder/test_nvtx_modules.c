/* The recorder as the program's NVTX tool (nvtx_inject.c) tells the
 * allocator hook whether a thread is inside a module's forward range
 * (gpuprof_torch_in_module): the hooks' "fwd:" pushes, nested in other
 * ranges and in each other, on each thread by itself, domains' pushes
 * counted in the nesting. Runs without a GPU: NVTX's own loader (its
 * header implementation, as PyTorch has it) loads the recorder named by
 * NVTX_INJECTION64_PATH, which ctest sets. */
#include <dlfcn.h>
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <stdlib.h>

#include "check.h"

static int (*in_module)(void);

static void *other_thread(void *arg)
{
	(void)arg;
	int outside = in_module();
	nvtxRangePushA("fwd:<Other>");
	int inside = in_module();
	nvtxRangePop();
	return (void *)(long)(!outside && inside && !in_module());
}

int main(void)
{
	const char *path = getenv("NVTX_INJECTION64_PATH");
	void *lib;
	pthread_t t;
	void *ok = NULL;

	CHECK(path != NULL);
	nvtxRangePushA("phase:forward"); /* NVTX loads its tool at its first call */
	lib = path ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : NULL;
	CHECK(lib != NULL);
	if (!lib)
		return CHECK_DONE();
	in_module = (int (*)(void))dlsym(lib, "gpuprof_torch_in_module");
	CHECK(in_module != NULL);
	if (!in_module)
		return CHECK_DONE();
	CHECK(!in_module()); /* another range: not a module */
	nvtxRangePushA("fwd:<Net>");
	CHECK(in_module());
	nvtxRangePushA("fwd:<Net>.fc1");
	nvtxRangePushA("op:aten::mm");
	CHECK(in_module());
	CHECK(pthread_create(&t, NULL, other_thread, NULL) == 0);
	CHECK(pthread_join(t, &ok) == 0);
	CHECK(ok == (void *)1L); /* its own nesting, not this thread's */
	nvtxRangePop();
	nvtxRangePop();
	CHECK(in_module()); /* the outer module's still open */
	nvtxDomainHandle_t d = nvtxDomainCreateA("other");
	nvtxEventAttributes_t a = { 0 };
	a.version = NVTX_VERSION;
	a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	a.messageType = NVTX_MESSAGE_TYPE_ASCII;
	a.message.ascii = "x";
	nvtxDomainRangePushEx(d, &a);
	nvtxRangePop(); /* pops the domain's range: one nesting for all */
	CHECK(in_module());
	nvtxRangePop(); /* fwd:<Net> */
	CHECK(!in_module());
	nvtxRangePop(); /* phase:forward */
	CHECK(nvtxRangePop() < 0); /* unbalanced: NVTX's error, the state intact */
	CHECK(!in_module());
	nvtxRangePushA("fwd:<Net>");
	CHECK(in_module());
	nvtxRangePop();
	CHECK(!in_module());
	return CHECK_DONE();
}
