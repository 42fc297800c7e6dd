# The costs `gpuprof help trace` gives (its MODES) are read here from
# bench/RESULTS.md, where they were measured, with their rounds, intervals,
# dates and commands, into bench_figures.h: the help has no figure of its
# own to fall behind. README.md quotes the same rows; tests/cli/
# test_doc_figures.py checks README.md, RESULTS.md and the help together.
set(_gp_results "${PROJECT_SOURCE_DIR}/bench/RESULTS.md")
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_gp_results}")
file(READ "${_gp_results}" _gp_results_text)

# A table row "| NAME | ROUNDS | **+1.5%** ...": its median cost, "+1.5%".
# NAME is a regular expression for the first cell, all of it.
function(_gp_bench_figure var name)
  string(REGEX MATCH "\n\\| ${name} \\| [0-9]+ \\| \\*\\*([+-][0-9]+\\.?[0-9]*%)\\*\\*"
         _match "${_gp_results_text}")
  if(NOT _match)
    message(FATAL_ERROR "bench/RESULTS.md: no row '${name}' with a median cost in bold, "
                        "which gpuprof's help quotes (viewer/bench_figures.cmake)")
  endif()
  set(${var} "${CMAKE_MATCH_1}" PARENT_SCOPE)
endfunction()

# Native mode with PyTorch's allocator hook, and `--stacks`
_gp_bench_figure(GP_COST_NATIVE "native \\(the default\\)")
_gp_bench_figure(GP_COST_STACKS "native `--stacks`")
_gp_bench_figure(GP_COST_TENSOR "tensor \\(with its switch to `cudaMallocAsync`\\)")
_gp_bench_figure(GP_COST_TORCH_PROFILER "torch\\.profiler, `profile_memory=True`")
# GPT-2 training step, synced loop
_gp_bench_figure(GP_COST_CUDA "gpuprof `--mode cuda`: the recorder, no Python hooks \\(`cuda`\\)")

file(CONFIGURE OUTPUT "${CMAKE_CURRENT_BINARY_DIR}/bench_figures.h" @ONLY CONTENT
"/* Made by viewer/bench_figures.cmake from bench/RESULTS.md: edit that. */
#ifndef GPUPROF_BENCH_FIGURES_H
#define GPUPROF_BENCH_FIGURES_H
/* a GPT-2 training step's median cost against the same program unprofiled */
#define GP_COST_NATIVE \"@GP_COST_NATIVE@\"
#define GP_COST_STACKS \"@GP_COST_STACKS@\"
#define GP_COST_TENSOR \"@GP_COST_TENSOR@\"
#define GP_COST_CUDA \"@GP_COST_CUDA@\"
#define GP_COST_TORCH_PROFILER \"@GP_COST_TORCH_PROFILER@\"
#endif
")
