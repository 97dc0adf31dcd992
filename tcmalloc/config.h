/* config.h for gperftools 2.18.1 on Linux (x86_64, aarch64) with glibc, as used by the
 * Bazel build of both the vanilla and the patched tree. It mirrors what upstream's
 * cmake/config.h.in produces on Debian 12 with libunwind disabled: the full library
 * unwinds through libgcc's _Unwind_Backtrace (or frame pointers), never libunwind.
 * Since 2.17 upstream no longer checks for struct mallinfo (the public tcmalloc.h
 * decides from the glibc version), so HAVE_STRUCT_MALLINFO{,2} are not defined here
 * either. The CMake and autotools builds of an exported tree generate their own config.h. */
#ifndef GPERFTOOLS_CONFIG_H_
#define GPERFTOOLS_CONFIG_H_

#define HAVE_ASM_PTRACE_H
#define HAVE_CXA_DEMANGLE 1
#define HAVE_DECL_BACKTRACE 0
#define HAVE_DECL_MEMALIGN 1
#define HAVE_DECL_NANOSLEEP 0
#define HAVE_DECL_POSIX_MEMALIGN 1
#define HAVE_DECL_PVALLOC 1
#define HAVE_DECL_SLEEP 0
#define HAVE_DECL_VALLOC 1
#define HAVE_EXECINFO_H
#define HAVE_FCNTL_H
#define HAVE_FEATURES_H
#define HAVE_GETEUID
#define HAVE_GLOB_H
#define HAVE_LIBUNWIND_H 0
#define HAVE_LINUX_SIGEV_THREAD_ID 1
#define HAVE_MALLOC_H
#define HAVE_MMAP
#define HAVE_PROGRAM_INVOCATION_NAME
#define HAVE_SBRK
#define HAVE_SCHED_H
#define HAVE_SYS_CDEFS_H
#define HAVE_SYS_SYSCALL_H 1
#define HAVE_SYS_UCONTEXT_H 1
#define HAVE_UCONTEXT_H 1
#define HAVE_UNISTD_H
#define HAVE_UNWIND_BACKTRACE
#define HAVE___ATTRIBUTE__
#define HAVE___ATTRIBUTE__ALIGNED_FN

#ifndef PERFTOOLS_DLL_DECL
# define PERFTOOLS_DLL_DECL
# define PERFTOOLS_DLL_DECL_FOR_UNITTESTS
#endif

#ifndef __STDC_FORMAT_MACROS
# define __STDC_FORMAT_MACROS 1
#endif

#endif  /* GPERFTOOLS_CONFIG_H_ */
