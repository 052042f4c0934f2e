/* template.h: helpers of the per-dtype template headers (NumPy's .c.src idiom, as dtype_foreach.h): a kernel
 * family's code is a header included once per instantiation, with its parameters defined as macros before each
 * include, so a debugger and the compiler's messages see real lines. Names built from a parameter go through
 * PCT_TPL_CAT (which expands its arguments first, as ## in a macro body would not). */
#ifndef PCT_TEMPLATE_H
#define PCT_TEMPLATE_H
#define PCT_TPL_CAT_(a, b) a##b
#define PCT_TPL_CAT(a, b) PCT_TPL_CAT_(a, b)
#define PCT_TPL_STR_(a) #a
#define PCT_TPL_STR(a) PCT_TPL_STR_(a)
#endif
