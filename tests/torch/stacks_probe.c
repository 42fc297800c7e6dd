/* A test module around profiler/python/gpuprof_stacks.c (test_stacks.py):
 * current() reads the calling thread's Python stack the way the allocator
 * hook does, with the GIL released; text(id) gives back what was handed to
 * the recorder for that id. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdlib.h>
#include <string.h>

#include "gpuprof_stacks.h"

#define MAX_IDS 4096

static char *texts[MAX_IDS];
static size_t lens[MAX_IDS];
static int refuse; /* the recorder's answer, to test a refused stack */

/* called without the GIL, as the recorder's entry point is */
static int keep(uint32_t id, const char *s, size_t len)
{
	if (refuse)
		return -28; /* -ENOSPC: the recorder's queue full */
	if (id >= MAX_IDS || texts[id])
		return -22;
	texts[id] = malloc(len ? len : 1);
	if (!texts[id])
		return -12;
	memcpy(texts[id], s, len);
	lens[id] = len;
	return 0;
}

static PyObject *current(PyObject *self, PyObject *noargs)
{
	uint32_t id;

	(void)self, (void)noargs;
	Py_BEGIN_ALLOW_THREADS
	id = gp_stk_current();
	Py_END_ALLOW_THREADS
	return PyLong_FromUnsignedLong(id);
}

static PyObject *current_with_gil(PyObject *self, PyObject *noargs)
{
	(void)self, (void)noargs;
	return PyLong_FromUnsignedLong(gp_stk_current());
}

static PyObject *text(PyObject *self, PyObject *arg)
{
	long id = PyLong_AsLong(arg);

	(void)self;
	if (id <= 0 || id >= MAX_IDS || !texts[id])
		Py_RETURN_NONE;
	return PyUnicode_DecodeUTF8(texts[id], (Py_ssize_t)lens[id], "strict");
}

static PyObject *set_refuse(PyObject *self, PyObject *arg)
{
	(void)self;
	refuse = PyObject_IsTrue(arg);
	Py_RETURN_NONE;
}

static PyObject *counts(PyObject *self, PyObject *noargs)
{
	struct gp_stk_counts c;

	(void)self, (void)noargs;
	gp_stk_get_counts(&c);
	return Py_BuildValue("{s:K,s:K,s:K,s:K}", "lookups", (unsigned long long)c.lookups, "new_keys",
			     (unsigned long long)c.new_keys, "stacks", (unsigned long long)c.stacks,
			     "dropped", (unsigned long long)c.dropped);
}

static PyMethodDef methods[] = {
	{ "current", current, METH_NOARGS, NULL },
	{ "current_with_gil", current_with_gil, METH_NOARGS, NULL },
	{ "text", text, METH_O, NULL },
	{ "refuse", set_refuse, METH_O, NULL },
	{ "counts", counts, METH_NOARGS, NULL },
	{ NULL, NULL, 0, NULL },
};

static struct PyModuleDef module = { PyModuleDef_HEAD_INIT, "stacks_probe", NULL, -1, methods,
				     NULL, NULL, NULL, NULL };

PyMODINIT_FUNC PyInit_stacks_probe(void)
{
	char why[256];
	PyObject *m;

	if (gp_stk_init(keep, why, sizeof(why)) != 0) {
		m = PyModule_Create(&module);
		if (m)
			PyModule_AddStringConstant(m, "unsupported", why);
		return m;
	}
	return PyModule_Create(&module);
}
