/*
 * RCCE_lib.h -- the RCCE 1.0.13 library header, as provided by sccemu.
 *
 * Written for sccemu from the public description of RCCE; it contains no
 * code from the RCCE distribution.
 *
 * Programs of the simplified (non-gory) interface include this header to
 * reach the MPB functions that RCCE.h declares only under GORY: MPB
 * allocation, one-sided put/get and flags.  This header declares them in
 * every build, together with the byte-wise put/get and RCCE_qsort.
 */
#ifndef RCCE_LIB_H
#define RCCE_LIB_H

#include "RCCE.h"

#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Dereferenced and word-sized MPB pointer types. */
typedef volatile unsigned char t_vchar;
typedef volatile unsigned int  t_vint;
typedef volatile unsigned int *t_vintp;

#ifndef GORY
/* Under GORY, RCCE.h has declared these already. */

/* MPB allocation (collective; same offset in every core's MPB).  Each line
   taken shrinks the payload chunk of the simplified send/recv. */
t_vcharp RCCE_malloc(size_t size);
t_vcharp RCCE_malloc_request(size_t size, size_t *chunk);
void     RCCE_free(t_vcharp ptr);

/* One-sided copies; MPB addresses are local ones, translated to core ID. */
int RCCE_put(t_vcharp target, t_vcharp source, int num_bytes, int ID);
int RCCE_get(t_vcharp target, t_vcharp source, int num_bytes, int ID);

/* Flags (allocation is collective). */
int RCCE_flag_alloc(RCCE_FLAG *flag);
int RCCE_flag_free(RCCE_FLAG *flag);
int RCCE_flag_write(RCCE_FLAG *flag, RCCE_FLAG_STATUS val, int ID);
int RCCE_flag_read(RCCE_FLAG flag, RCCE_FLAG_STATUS *val, int ID);
int RCCE_wait_until(RCCE_FLAG flag, RCCE_FLAG_STATUS val);

#endif /* !GORY */

/* Copy one byte: put_char from source (private or local MPB) to target in
   core ID's MPB; get_char from source in core ID's MPB to target.  No
   alignment is required. */
int RCCE_put_char(t_vcharp target, t_vcharp source, int ID);
int RCCE_get_char(t_vcharp target, t_vcharp source, int ID);

/* RCCE's globals that applications read: this UE's rank, the number of UEs,
   and every UE's MPB as an address in this process (RCCE_comm_buffer[ue] + k
   is byte k of UE ue's MPB; line 0 is reserved).  Set by RCCE_init. */
extern int RCCE_IAM;
extern int RCCE_NP;
extern t_vcharp RCCE_comm_buffer[4096];

/* Makes this UE's next reads of MPB lines see what other UEs wrote (on the
   chip it invalidates the MPB-typed lines of the L1 cache). */
void RC_cache_invalidate(void);

/* Sorts like qsort(3): num elements of size bytes at base. */
int RCCE_qsort(char *base, size_t num, size_t size,
               int (*compare)(const void *, const void *));

#ifdef __cplusplus
}
#endif

#endif /* RCCE_LIB_H */
