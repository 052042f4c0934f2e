/* copy_loops.h: inner loops converting one dtype to another (used by copy_ and casts). */
#ifndef PCT_COPY_LOOPS_H
#define PCT_COPY_LOOPS_H
#include "../iter.h"
/* The loop writing dtype `dst` from dtype `src` (args[0] = dst, args[1] = src). */
pct_loop_fn pct_copy_loop(int dst, int src);
#endif
