/* Ends one expansion of trace_format.def: each includer defines the seven
 * GP_* macros, includes the list, then this. No include guard, on purpose:
 * it is included once after every expansion. */
#undef GP_FORMAT
#undef GP_CAT
#undef GP_KIND
#undef GP_EVENT
#undef GP_TOP
#undef GP_FIELD
#undef GP_ARG
