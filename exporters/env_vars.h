/* gpuprof's environment variables, made from env_vars.def (their one list:
 * types, defaults, who sets and who reads each):
 *
 *   GP_ENV_<ID>            the name, e.g. GP_ENV_OUTPUT "GPUPROF_OUTPUT"
 *   GP_ENV_<ID>_DEFAULT,   a NUM variable's default and bounds, e.g.
 *   _MIN, _MAX             GP_ENV_FLUSH_MS_DEFAULT 250
 *
 * The launcher (viewer/trace/), the recorder (profiler/config.c) and
 * analyze pass these to getenv and setenv, so that a name is spelled once;
 * no "GPUPROF_..." literal is written anywhere else (tests/unit/
 * test_env_vars.py). Static arrays, not macros, as in trace_format.h: the
 * X-macro cannot define macros. */
#ifndef GPUPROF_ENV_VARS_H
#define GPUPROF_ENV_VARS_H

/* Expands an entry's tokens only for NUM variables. */
#define GP_ENV_IF_NUM(...) __VA_ARGS__
#define GP_ENV_IF_TEXT(...)

#define GP_ENV(id, type, dflt, min, max, set, read, meaning) \
	static const char GP_ENV_##id[] = "GPUPROF_" #id;
#include "env_vars.def"
#undef GP_ENV

/* unsigned long long: the bounds of every NUM variable fit */
#define GP_ENV(id, type, dflt, min, max, set, read, meaning)                     \
	GP_ENV_IF_##type(static const unsigned long long GP_ENV_##id##_DEFAULT = (dflt); \
			 static const unsigned long long GP_ENV_##id##_MIN = (min);       \
			 static const unsigned long long GP_ENV_##id##_MAX = (max);)
#include "env_vars.def"
#undef GP_ENV

#endif
