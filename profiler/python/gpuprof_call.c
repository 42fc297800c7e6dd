/* _gpuprof_call: the per-module-call work of gpuprof's PyTorch hooks,
 * compiled: the hooks' default where it is built (gpuprof_torch.py's
 * _Hooks._python_call does the same in Python; GPUPROF_TORCH_FAST=0 uses it).
 *
 * Why: on a host where the recorder's CUPTI work leaves a synced training
 * step's forward host-bound, every µs the hooks spend per module call is a
 * µs of step time (bench/RESULTS.md, cost: the hooks cost a GPT-2 step
 * +2.6-3.6% there, the recorder alone about +1%). In Python that work is an
 * interpreter frame, attribute lookups and method calls around the few
 * PyTorch calls it needs; here it is C around the same calls.
 *
 * What stays in Python: the descriptor that replaces nn.Module.__call__
 * (torch.compile inlines it and must see its is_compiling() branch, which
 * a C callable would turn into a graph break at every submodule call), the
 * naming of modules not seen yet (lookup), and the backward note of an
 * outermost module call or of an output that is not a plain tensor
 * (_watch_backward). A Call does the rest of one module call exactly as the
 * Python wrapper does: the thread's stack of running modules, the forward
 * range, the call itself, and the backward note of an inner module whose
 * output is a tensor (or a tuple or list that starts with one).
 *
 * References: a Call owns one reference to each object it was made with;
 * per call, everything it takes is released before it returns. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>

typedef struct {
	PyObject_HEAD
	vectorcallfunc vectorcall;
	PyObject *orig;         /* nn.Module.__call__ as it was */
	PyObject *hooks;        /* the _Hooks: .tls.s is the thread's _Thread */
	PyObject *tensor_type;  /* torch.Tensor: outputs of exactly this type take the fast note */
	PyObject *fwd_names;    /* dict id(module) -> "fwd:<path>" */
	PyObject *paths;        /* dict id(module) -> "<path>" */
	PyObject *lookup;       /* lookup(module, running_root) -> "fwd:<path>" */
	PyObject *new_thread;   /* () -> this thread's new _Thread */
	PyObject *push, *pop;   /* NVTX push(name), pop() */
	PyObject *grad_enabled; /* torch.is_grad_enabled */
	PyObject *watch;        /* _watch_backward(st, module, output): every other note */
	int fwd, bwd;
} Call;

/* An attribute that may be missing, without making the AttributeError
 * (which costs more than the rest of a note): 1 and *out, 0, or -1. */
#if PY_VERSION_HEX >= 0x030D0000
#define lookup_attr PyObject_GetOptionalAttr
#else
#define lookup_attr _PyObject_LookupAttr
#endif

static PyObject *s_tls, *s_s, *s_stack, *s_notes, *s_last_seq, *s_grad_fn, *s_sequence_nr,
	*s_metadata, *s_gpuprof;

/* The thread's _Thread (new reference), made by new_thread at its first call. */
static PyObject *thread_state(Call *c)
{
	PyObject *tls = PyObject_GetAttr(c->hooks, s_tls);
	if (!tls)
		return NULL;
	PyObject *st = PyObject_GetAttr(tls, s_s);
	Py_DECREF(tls);
	if (st || !PyErr_ExceptionMatches(PyExc_AttributeError))
		return st;
	PyErr_Clear();
	return PyObject_CallNoArgs(c->new_thread);
}

/* orig(module, *args, **kwargs) without building a new tuple. */
static PyObject *call_orig(Call *c, PyObject *module, PyObject *args, PyObject *kwargs)
{
	Py_ssize_t n = PyTuple_GET_SIZE(args);
	PyObject *small[8];
	PyObject **argv = small;

	if (n + 1 > (Py_ssize_t)(sizeof(small) / sizeof(small[0]))) {
		argv = PyMem_Malloc((size_t)(n + 1) * sizeof(*argv));
		if (!argv)
			return PyErr_NoMemory();
	}
	argv[0] = module;
	for (Py_ssize_t i = 0; i < n; i++)
		argv[i + 1] = PyTuple_GET_ITEM(args, i);
	PyObject *r = PyObject_VectorcallDict(c->orig, argv, (size_t)(n + 1), kwargs);
	if (argv != small)
		PyMem_Free(argv);
	return r;
}

/* Whether this node was noted just before (an inner module's output is
 * often its caller's too): by sequence number against the thread's last
 * one, or, in a PyTorch without _sequence_nr, by a mark in the node's
 * metadata dict, as _watch_backward does. 1, 0, or -1 with an exception. */
static int seen_before(PyObject *st, PyObject *g)
{
	PyObject *method;
	int has = lookup_attr(g, s_sequence_nr, &method);
	if (has < 0)
		return -1;
	if (has) {
		PyObject *key = PyObject_CallNoArgs(method);
		Py_DECREF(method);
		if (!key)
			return -1;
		PyObject *last = PyObject_GetAttr(st, s_last_seq);
		int dup = last ? PyObject_RichCompareBool(last, key, Py_EQ) : -1;
		Py_XDECREF(last);
		if (dup >= 0 && PyObject_SetAttr(st, s_last_seq, key) < 0)
			dup = -1;
		Py_DECREF(key);
		return dup;
	}
	PyObject *md = PyObject_GetAttr(g, s_metadata);
	if (!md)
		return -1;
	int dup = PySequence_Contains(md, s_gpuprof);
	if (dup >= 0 && PyObject_SetItem(md, s_gpuprof, Py_True) < 0)
		dup = -1;
	Py_DECREF(md);
	return dup;
}

/* The output's tensor for the fast note, borrowed; NULL to leave the
 * output to _watch_backward. */
static PyObject *plain_tensor(Call *c, PyObject *out)
{
	if ((PyObject *)Py_TYPE(out) == c->tensor_type)
		return out;
	PyObject *first = NULL;
	if (PyTuple_Check(out) && PyTuple_GET_SIZE(out) > 0)
		first = PyTuple_GET_ITEM(out, 0);
	else if (PyList_Check(out) && PyList_GET_SIZE(out) > 0)
		first = PyList_GET_ITEM(out, 0);
	return first && (PyObject *)Py_TYPE(first) == c->tensor_type ? first : NULL;
}

/* The backward note of one module call that returned out (not None):
 * _watch_backward's inner branch here, everything else there. */
static int note_backward(Call *c, PyObject *st, PyObject *stack, PyObject *module,
			 PyObject *key, PyObject *out)
{
	PyObject *r = PyObject_CallNoArgs(c->grad_enabled);
	if (!r)
		return -1;
	int on = PyObject_IsTrue(r);
	Py_DECREF(r);
	if (on <= 0)
		return on;
	PyObject *t = PyList_GET_SIZE(stack) > 0 ? plain_tensor(c, out) : NULL;
	if (!t) {
		r = PyObject_CallFunctionObjArgs(c->watch, st, module, out, NULL);
		Py_XDECREF(r);
		return r ? 0 : -1;
	}
	Py_INCREF(t); /* borrowed from out's first item until here */
	PyObject *g = PyObject_GetAttr(t, s_grad_fn);
	Py_DECREF(t);
	if (!g)
		return -1;
	int err = 0;
	if (g != Py_None) {
		int dup = seen_before(st, g);
		if (dup < 0) {
			err = -1;
		} else if (!dup) {
			PyObject *path = PyDict_GetItemWithError(c->paths, key); /* borrowed */
			if (!path) {
				err = PyErr_Occurred() ? -1 : 0;
			} else {
				PyObject *notes = PyObject_GetAttr(st, s_notes);
				PyObject *pair = notes ? PyTuple_Pack(2, g, path) : NULL;
				err = pair && PyList_Check(notes) ? PyList_Append(notes, pair) : -1;
				if (err && !PyErr_Occurred())
					PyErr_SetString(PyExc_TypeError, "gpuprof: the thread's notes are not a list");
				Py_XDECREF(pair);
				Py_XDECREF(notes);
			}
		}
	}
	Py_DECREF(g);
	return err;
}

/* Takes module off the top of the thread's stack, where its call put it
 * (a call that raised inside may have left its callees above it): 1, 0 if
 * it is not on top, -1 with an exception. */
static int pop_if_top(PyObject *stack, PyObject *module)
{
	Py_ssize_t n = PyList_GET_SIZE(stack);
	if (n == 0 || PyList_GET_ITEM(stack, n - 1) != module)
		return 0;
	return PyList_SetSlice(stack, n - 1, n, NULL) < 0 ? -1 : 1;
}

/* Ends the module's forward range if it is still the innermost one (as the
 * Python wrapper's finally: also when the call raised; an exception from
 * the call is kept over one from here). */
static PyObject *end_forward(Call *c, PyObject *stack, PyObject *module, PyObject *result)
{
#if PY_VERSION_HEX >= 0x030C0000
	PyObject *raised = result ? NULL : PyErr_GetRaisedException();
#else
	PyObject *et = NULL, *ev = NULL, *tb = NULL;
	if (!result)
		PyErr_Fetch(&et, &ev, &tb);
#endif
	int popped = pop_if_top(stack, module);
	int bad = popped < 0;
	if (popped > 0 && c->fwd) {
		PyObject *r = PyObject_CallNoArgs(c->pop);
		bad = !r;
		Py_XDECREF(r);
	}
	if (bad) {
		if (result)
			Py_CLEAR(result);
		else
			PyErr_Clear();
	}
#if PY_VERSION_HEX >= 0x030C0000
	if (raised)
		PyErr_SetRaisedException(raised);
#else
	if (et || ev || tb)
		PyErr_Restore(et, ev, tb);
#endif
	return result;
}

/* Call(module, args, kwargs): one module call, args a tuple, kwargs a dict or None. */
static PyObject *call_vectorcall(PyObject *self, PyObject *const *argv, size_t nargsf,
				 PyObject *kwnames)
{
	Call *c = (Call *)self;
	if (!c->orig) { /* cleared by the garbage collector while a cycle is freed */
		PyErr_SetString(PyExc_RuntimeError, "gpuprof: Call used after it was cleared");
		return NULL;
	}
	if (PyVectorcall_NARGS(nargsf) != 3 || kwnames) {
		PyErr_SetString(PyExc_TypeError, "Call(module, args, kwargs)");
		return NULL;
	}
	PyObject *module = argv[0], *args = argv[1], *kwargs = argv[2];
	if (!PyTuple_Check(args) || (kwargs != Py_None && !PyDict_Check(kwargs))) {
		PyErr_SetString(PyExc_TypeError, "Call(module, args, kwargs): a tuple and a dict or None");
		return NULL;
	}
	if (kwargs == Py_None)
		kwargs = NULL;

	PyObject *result = NULL, *stack = NULL, *key = NULL, *name = NULL;
	PyObject *st = thread_state(c);
	if (!st)
		return NULL;
	stack = PyObject_GetAttr(st, s_stack);
	if (!stack)
		goto out;
	if (!PyList_Check(stack)) {
		PyErr_SetString(PyExc_TypeError, "gpuprof: the thread's stack is not a list");
		goto out;
	}
	key = PyLong_FromVoidPtr(module); /* id(module) */
	if (!key)
		goto out;
	name = PyDict_GetItemWithError(c->fwd_names, key);
	if (name) {
		Py_INCREF(name);
	} else if (PyErr_Occurred()) {
		goto out;
	} else {
		PyObject *root = PyList_GET_SIZE(stack) > 0 ? PyList_GET_ITEM(stack, 0) : Py_None;
		Py_INCREF(root); /* lookup runs Python code */
		name = PyObject_CallFunctionObjArgs(c->lookup, module, root, NULL);
		Py_DECREF(root);
		if (!name)
			goto out;
	}
	if (PyList_GET_SIZE(stack) == 0) {
		/* a forward that raised left its notes */
		PyObject *notes = PyList_New(0);
		int bad = !notes || PyObject_SetAttr(st, s_notes, notes) < 0;
		Py_XDECREF(notes);
		if (bad)
			goto out;
	}
	if (PyList_Append(stack, module) < 0)
		goto out;
	if (c->fwd) {
		PyObject *r = PyObject_CallOneArg(c->push, name);
		if (!r) {
			pop_if_top(stack, module);
			goto out;
		}
		Py_DECREF(r);
	}
	result = end_forward(c, stack, module, call_orig(c, module, args, kwargs));
	if (result && c->bwd && result != Py_None && note_backward(c, st, stack, module, key, result) < 0)
		Py_CLEAR(result);
out:
	Py_XDECREF(name);
	Py_XDECREF(key);
	Py_XDECREF(stack);
	Py_DECREF(st);
	return result;
}

/* The objects a Call owns, in Call()'s argument order: its constructor,
 * traverse and clear go through this one list. */
static const size_t field_offsets[] = {
	offsetof(Call, orig),  offsetof(Call, hooks), offsetof(Call, tensor_type),
	offsetof(Call, fwd_names), offsetof(Call, paths), offsetof(Call, lookup),
	offsetof(Call, new_thread), offsetof(Call, push), offsetof(Call, pop),
	offsetof(Call, grad_enabled), offsetof(Call, watch),
};
#define NFIELDS (sizeof(field_offsets) / sizeof(field_offsets[0]))
_Static_assert(NFIELDS == 11, "Call()'s argument format below has 11 objects");

static PyObject **field(PyObject *self, size_t i)
{
	return (PyObject **)((char *)self + field_offsets[i]);
}

static PyObject *call_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
	static char *kw[] = { "orig", "hooks", "tensor_type", "fwd_names", "paths", "lookup",
			      "new_thread", "push", "pop", "grad_enabled", "watch", "fwd", "bwd", NULL };
	PyObject *o[NFIELDS];
	int fwd, bwd;
	if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOOO!O!OOOOOOpp:Call", kw, &o[0], &o[1], &o[2],
					 &PyDict_Type, &o[3], &PyDict_Type, &o[4], &o[5], &o[6],
					 &o[7], &o[8], &o[9], &o[10], &fwd, &bwd))
		return NULL;
	if (!PyType_Check(o[2])) {
		PyErr_SetString(PyExc_TypeError, "Call: tensor_type must be a type");
		return NULL;
	}
	Call *c = (Call *)type->tp_alloc(type, 0);
	if (!c)
		return NULL;
	c->vectorcall = call_vectorcall;
	for (size_t i = 0; i < NFIELDS; i++)
		*field((PyObject *)c, i) = Py_NewRef(o[i]);
	c->fwd = fwd;
	c->bwd = bwd;
	return (PyObject *)c;
}

static int call_traverse(PyObject *self, visitproc visit, void *arg)
{
	for (size_t i = 0; i < NFIELDS; i++)
		Py_VISIT(*field(self, i));
	return 0;
}

static int call_clear(PyObject *self)
{
	for (size_t i = 0; i < NFIELDS; i++)
		Py_CLEAR(*field(self, i));
	return 0;
}

static void call_dealloc(PyObject *self)
{
	PyObject_GC_UnTrack(self);
	call_clear(self);
	Py_TYPE(self)->tp_free(self);
}

static PyTypeObject CallType = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "_gpuprof_call.Call",
	.tp_doc = "Call(orig, hooks, tensor_type, fwd_names, paths, lookup, new_thread, push, pop, "
		  "grad_enabled, watch, fwd, bwd)(module, args, kwargs): one module call with "
		  "gpuprof's forward range and backward note (see gpuprof_torch.py).",
	.tp_basicsize = sizeof(Call),
	.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
	.tp_new = call_new,
	.tp_dealloc = call_dealloc,
	.tp_traverse = call_traverse,
	.tp_clear = call_clear,
	.tp_vectorcall_offset = offsetof(Call, vectorcall),
	.tp_call = PyVectorcall_Call,
};

static struct PyModuleDef module_def = {
	PyModuleDef_HEAD_INIT,
	.m_name = "_gpuprof_call",
	.m_doc = "gpuprof's PyTorch hooks: the per-module-call work, compiled.",
	.m_size = -1,
};

PyMODINIT_FUNC PyInit__gpuprof_call(void);
PyMODINIT_FUNC PyInit__gpuprof_call(void)
{
	struct {
		PyObject **s;
		const char *text;
	} strings[] = {
		{ &s_tls, "tls" },           { &s_s, "s" },
		{ &s_stack, "stack" },       { &s_notes, "notes" },
		{ &s_last_seq, "last_seq" }, { &s_grad_fn, "grad_fn" },
		{ &s_sequence_nr, "_sequence_nr" }, { &s_metadata, "metadata" },
		{ &s_gpuprof, "gpuprof" },
	};
	for (size_t i = 0; i < sizeof(strings) / sizeof(strings[0]); i++) {
		if (!*strings[i].s && !(*strings[i].s = PyUnicode_InternFromString(strings[i].text)))
			return NULL;
	}
	if (PyType_Ready(&CallType) < 0)
		return NULL;
	PyObject *m = PyModule_Create(&module_def);
	if (!m)
		return NULL;
	if (PyModule_AddObjectRef(m, "Call", (PyObject *)&CallType) < 0) {
		Py_DECREF(m);
		return NULL;
	}
	return m;
}
