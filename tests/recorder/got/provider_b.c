/* A second copy of provider_a's gp_fake_alloc (a second libcudart). */
int gp_fake_alloc(int x);

int gp_fake_alloc(int x) { return x + 5000; }
