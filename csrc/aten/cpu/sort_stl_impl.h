/* sort_stl_impl.h: libstdc++'s introsort, heap-select and introselect (Note [Matching
 * std::sort] in sort.c) over one element type and order, included once per instance, the way
 * NumPy's .c.src loops are expanded. Before including, define:
 *   STL_P          the prefix of the functions: <P>_sort, <P>_partial_sort, <P>_nth_element
 *                  (and their helpers <P>_linear_insert, <P>_insertion_sort, ...)
 *   STL_T          the element type
 *   STL_LESS(x, y) the strict order, an expression over two STL_T values that may use `ctx`
 * They are undefined at the end, ready for the next instance. Instances a file leaves unused
 * are not warned about (SORT_FN). No include guard: by design. */
#define STL_CAT_(a, b) a##_##b
#define STL_CAT(a, b) STL_CAT_(a, b)
#define STL_FN(name) STL_CAT(STL_P, name)

SORT_FN void STL_FN(linear_insert)(STL_T *a, int64_t i, const void *ctx)
{
    (void)ctx;
    STL_T v = a[i];
    int64_t n = i - 1;
    while (n >= 0 && STL_LESS(v, a[n])) {
        a[i] = a[n];
        i = n;
        n--;
    }
    a[i] = v;
}
SORT_FN void STL_FN(insertion_sort)(STL_T *a, int64_t n, const void *ctx)
{
    (void)ctx;
    for (int64_t i = 1; i < n; i++) {
        if (STL_LESS(a[i], a[0])) {
            STL_T v = a[i];
            memmove(a + 1, a, (size_t)i * sizeof(STL_T));
            a[0] = v;
        } else {
            STL_FN(linear_insert)(a, i, ctx);
        }
    }
}
SORT_FN void STL_FN(final_insertion_sort)(STL_T *a, int64_t n, const void *ctx)
{
    if (n > 16) {
        STL_FN(insertion_sort)(a, 16, ctx);
        for (int64_t i = 16; i < n; i++) STL_FN(linear_insert)(a, i, ctx);
    } else {
        STL_FN(insertion_sort)(a, n, ctx);
    }
}
SORT_FN void STL_FN(adjust_heap)(STL_T *a, int64_t hole, int64_t len, STL_T v, const void *ctx)
{
    (void)ctx;
    int64_t top = hole, sc = hole;
    while (sc < (len - 1) / 2) {
        sc = 2 * (sc + 1);
        if (STL_LESS(a[sc], a[sc - 1])) sc--;
        a[hole] = a[sc];
        hole = sc;
    }
    if ((len & 1) == 0 && sc == (len - 2) / 2) {
        sc = 2 * (sc + 1);
        a[hole] = a[sc - 1];
        hole = sc - 1;
    }
    int64_t parent = (hole - 1) / 2;
    while (hole > top && STL_LESS(a[parent], v)) {
        a[hole] = a[parent];
        hole = parent;
        parent = (hole - 1) / 2;
    }
    a[hole] = v;
}
SORT_FN void STL_FN(heap_select)(STL_T *a, int64_t m, int64_t n, const void *ctx)
{
    if (m >= 2) {
        for (int64_t parent = (m - 2) / 2;; parent--) {
            STL_FN(adjust_heap)(a, parent, m, a[parent], ctx);
            if (parent == 0) break;
        }
    }
    for (int64_t i = m; i < n; i++) {
        if (STL_LESS(a[i], a[0])) {
            STL_T v = a[i];
            a[i] = a[0];
            STL_FN(adjust_heap)(a, 0, m, v, ctx);
        }
    }
}
SORT_FN void STL_FN(sort_heap)(STL_T *a, int64_t m, const void *ctx)
{
    while (m > 1) {
        m--;
        STL_T v = a[m];
        a[m] = a[0];
        STL_FN(adjust_heap)(a, 0, m, v, ctx);
    }
}
/* std::partial_sort(a, a + m, a + n) */
SORT_FN void STL_FN(partial_sort)(STL_T *a, int64_t m, int64_t n, const void *ctx)
{
    STL_FN(heap_select)(a, m, n, ctx);
    STL_FN(sort_heap)(a, m, ctx);
}
SORT_FN void STL_FN(swap)(STL_T *a, int64_t i, int64_t j)
{
    STL_T t = a[i];
    a[i] = a[j];
    a[j] = t;
}
SORT_FN int64_t STL_FN(partition_pivot)(STL_T *a, int64_t n, const void *ctx)
{
    (void)ctx;
    int64_t x = 1, y = n / 2, z = n - 1;
    if (STL_LESS(a[x], a[y])) {
        if (STL_LESS(a[y], a[z])) STL_FN(swap)(a, 0, y);
        else if (STL_LESS(a[x], a[z])) STL_FN(swap)(a, 0, z);
        else STL_FN(swap)(a, 0, x);
    } else if (STL_LESS(a[x], a[z])) {
        STL_FN(swap)(a, 0, x);
    } else if (STL_LESS(a[y], a[z])) {
        STL_FN(swap)(a, 0, z);
    } else {
        STL_FN(swap)(a, 0, y);
    }
    int64_t f = 1, l = n;
    for (;;) {
        while (f < n - 1 && STL_LESS(a[f], a[0])) f++;
        l--;
        while (l > 0 && STL_LESS(a[0], a[l])) l--;
        if (!(f < l)) return f;
        STL_FN(swap)(a, f, l);
        f++;
    }
}
SORT_FN void STL_FN(introsort_loop)(STL_T *a, int64_t n, int depth, const void *ctx)
{
    while (n > 16) {
        if (depth == 0) {
            STL_FN(partial_sort)(a, n, n, ctx);
            return;
        }
        depth--;
        int64_t cut = STL_FN(partition_pivot)(a, n, ctx);
        STL_FN(introsort_loop)(a + cut, n - cut, depth, ctx);
        n = cut;
    }
}
/* std::sort(a, a + n) */
SORT_FN void STL_FN(sort)(STL_T *a, int64_t n, const void *ctx)
{
    if (n < 2) return;
    STL_FN(introsort_loop)(a, n, 2 * sort_lg(n), ctx);
    STL_FN(final_insertion_sort)(a, n, ctx);
}
/* std::nth_element(a, a + nth, a + n) */
SORT_FN void STL_FN(nth_element)(STL_T *a, int64_t nth, int64_t n, const void *ctx)
{
    if (n == 0 || nth >= n) return;
    int depth = 2 * sort_lg(n);
    while (n > 3) {
        if (depth == 0) {
            STL_FN(heap_select)(a, nth + 1, n, ctx);
            STL_FN(swap)(a, 0, nth);
            return;
        }
        depth--;
        int64_t cut = STL_FN(partition_pivot)(a, n, ctx);
        if (cut <= nth) {
            a += cut;
            n -= cut;
            nth -= cut;
        } else {
            n = cut;
        }
    }
    STL_FN(insertion_sort)(a, n, ctx);
}

#undef STL_CAT_
#undef STL_CAT
#undef STL_FN
#undef STL_P
#undef STL_T
#undef STL_LESS
