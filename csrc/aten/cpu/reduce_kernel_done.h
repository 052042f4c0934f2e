/* reduce_kernel_done.h: ends the instantiation of one op's kernels (reduce_kernels_*.c): undefines what the op set
 * for reduce_kernel_impl.h, so the next op starts clean. No include guard: by design. */
#undef RK_OP
#undef RK_CASCADE
#undef RK_FLOAT_ONLY
#undef RK_PF_NAME
#undef RK_PF_A
#undef RK_PF_MAP
#undef RK_PF_OP
#undef RK_PF_ID
#undef RK_PF_FOLD
#undef RK_PF2_NAME
#undef RK_PF2_A
#undef RK_PF2_MAP
#undef RK_ROWS_C
