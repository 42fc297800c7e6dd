/* Where a moment falls among the program's steps: the model decides it
 * (attrib.c), the result and its renderers say it (result.h). */
#ifndef GPUPROF_AN_STEP_WHEN_H
#define GPUPROF_AN_STEP_WHEN_H

/* Where a moment falls among the program's steps (CATEGORIES.md, "Step";
 * a step is an optimizer step: the mark step:N ends step N). With its step
 * number N: in step N; before step 1 (N is 1: the program's setup, before
 * its first module forward); after step N (N is the last step: the
 * program's tail, where no step began after the last mark). Text and page
 * say it as gp_an_step_text() does; JSON gives step and step_when. */
enum gp_an_step_when { GP_AN_STEP_IN, GP_AN_STEP_BEFORE, GP_AN_STEP_AFTER, GP_AN_STEP_WHEN_N };

#endif
