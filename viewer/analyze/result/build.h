/* The result of an analysis (result.h) from the analysis state (state.h). */
#ifndef GPUPROF_AN_BUILD_H
#define GPUPROF_AN_BUILD_H

#include "result.h"
#include "state.h"

/* A new result the caller frees (gp_an_result_free), or NULL when out of
 * memory. Takes nothing from a: a can be freed right after. */
struct gp_an_result *an_result_build(struct an_analysis *a);

#endif
