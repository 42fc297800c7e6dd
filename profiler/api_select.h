/* Which API calls become activity records (api_select.c). */
#ifndef GPUPROF_API_SELECT_H
#define GPUPROF_API_SELECT_H

/* Turns API records on or off as parts (GP_REC_API, GP_REC_LAUNCHES) say,
 * leaving out stream-ordered allocations and frees while the callbacks
 * record them (GP_REC_MEMORY without GP_REC_POOLS); returns how many API
 * calls are recorded. */
int gp_api_select_apply(unsigned parts);
/* The trace name of a runtime/driver cbid; NULL if unknown. */
const char *gp_api_name(int driver, unsigned cbid);
int gp_api_is_launch(int driver, unsigned cbid);

#endif
