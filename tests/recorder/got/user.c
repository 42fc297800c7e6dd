/* A caller of provider_a or provider_b, built several times under other
 * names (USER) and link options: its calls go through its own GOT. */
int gp_fake_alloc(int x);
int gp_fake_free(int x);
int gp_fake_driver_alloc(int x);

#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)

#ifndef NO_ALLOC
int CAT(USER, _alloc)(int x);
int CAT(USER, _alloc)(int x) { return gp_fake_alloc(x); }
#endif

#ifdef WITH_FREE
int CAT(USER, _free)(int x);
int CAT(USER, _free)(int x) { return gp_fake_free(x); }
#endif

#ifdef WITH_POINTER
/* the address taken: a GLOB_DAT slot besides the PLT's */
typedef int (*fn)(int);
fn CAT(USER, _alloc_ptr)(void);
fn CAT(USER, _alloc_ptr)(void) { return gp_fake_alloc; }
#endif

#ifdef WITH_DRIVER
int CAT(USER, _driver)(int x);
int CAT(USER, _driver)(int x) { return gp_fake_driver_alloc(x); }
#endif
