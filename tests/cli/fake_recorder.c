/* Stands in for libgpuprof_inject.so in the CLI tests: a library that loads,
 * so `gpuprof --trace` sets the recorder up as it would with the real one,
 * whether or not the real one is built or its libcupti can be found. Nothing
 * ever injects it: the test programs make no CUDA call. */
int gpuprof_cli_fake_recorder;
