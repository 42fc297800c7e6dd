/* The library whose functions test_got_patch redirects (a stand-in for
 * libcudart): each returns its argument plus a number saying who ran. */
int gp_fake_alloc(int x);
int gp_fake_free(int x);
int gp_fake_driver_alloc(int x);

int gp_fake_alloc(int x) { return x + 1000; }
int gp_fake_free(int x) { return x + 2000; }
int gp_fake_driver_alloc(int x) { return x + 3000; }
