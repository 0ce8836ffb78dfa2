/*
 * RCCE.h -- the RCCE 1.0.13 application interface, as provided by sccemu.
 *
 * Written for sccemu from the public description of RCCE (names, signatures
 * and constants); it contains no code from the RCCE distribution.
 *
 * One library (librcce) serves every build variant.  The variant a program
 * was compiled for is chosen here, with macros:
 *
 *   GORY                 the "gory" interface: user-managed MPB buffers and
 *                        flags; RCCE_send/RCCE_recv/RCCE_recv_test take 7
 *                        (8) arguments and are mapped to the library's
 *                        RCCE_send_gory/RCCE_recv_gory/RCCE_recv_test_gory.
 *   (default)            the simplified interface: 3-argument send/recv and
 *                        the collectives bcast/reduce/allreduce.
 *   SINGLEBITFLAGS       flags are single bits (256 per MPB line) instead of
 *                        bytes (32 per line); told to the library at init.
 *   RC_POWER_MANAGEMENT  declares the power-management interface.
 *   RCCE_MAXNP           size of RCCE_COMM.member[] (48 unless defined by the
 *                        program, at most 4096); told to the library at init.
 *
 * Applications write "int RCCE_APP(int argc, char **argv)".
 */
#ifndef RCCE_H
#define RCCE_H

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Version string of the interface this header follows. */
#define _RCCE "1.0.13 release (sccemu)"

/* The application's entry point; RCCE programs never spell "main". */
#define RCCE_APP main

/* RCCE prints its diagnostics to STDERR, which it defines as stdout. */
#define STDERR stdout

/* ------------------------------------------------------------------------ */
/* Sizes                                                                    */
/* ------------------------------------------------------------------------ */

/* One MPB cache line is 32 bytes. */
#define LOG2_LINE_SIZE     5
#define RCCE_LINE_SIZE     32
/* MPB bytes per core (line 0 is reserved, 8160 bytes are allocatable). */
#define RCCE_BUFF_SIZE_MAX 8192
/* Bytes of off-chip shared DRAM handed out by RCCE_shmalloc. */
#define RCCE_SHM_SIZE_MAX  (64 * 1024 * 1024)

/* Capacity of RCCE_COMM.member[]; a program may define its own value. */
#ifndef RCCE_MAXNP
#define RCCE_MAXNP 48
#endif
#if (RCCE_MAXNP) < 1 || (RCCE_MAXNP) > 4096
#error "RCCE_MAXNP must be between 1 and 4096"
#endif

/* ------------------------------------------------------------------------ */
/* Return codes                                                             */
/* ------------------------------------------------------------------------ */

#define RCCE_SUCCESS                        0
#define RCCE_ERROR_BASE                     1234321
#define RCCE_ERROR_TARGET                   (RCCE_ERROR_BASE + 1)
#define RCCE_ERROR_SOURCE                   (RCCE_ERROR_BASE + 2)
#define RCCE_ERROR_ID                       (RCCE_ERROR_BASE + 3)
#define RCCE_ERROR_MESSAGE_LENGTH           (RCCE_ERROR_BASE + 4)
#define RCCE_ERROR_FLAG_UNDEFINED           (RCCE_ERROR_BASE + 5)
#define RCCE_ERROR_NUM_UES                  (RCCE_ERROR_BASE + 6)
#define RCCE_ERROR_DATA_OVERLAP             (RCCE_ERROR_BASE + 7)
#define RCCE_ERROR_ALIGNMENT                (RCCE_ERROR_BASE + 8)
#define RCCE_ERROR_DEBUG_FLAG               (RCCE_ERROR_BASE + 9)
#define RCCE_ERROR_FLAG_NOT_IN_COMM_BUFFER  (RCCE_ERROR_BASE + 10)
#define RCCE_ERROR_FLAG_STATUS_UNDEFINED    (RCCE_ERROR_BASE + 11)
#define RCCE_ERROR_FLAG_NOT_ALLOCATED       (RCCE_ERROR_BASE + 12)
#define RCCE_ERROR_VAL_UNDEFINED            (RCCE_ERROR_BASE + 13)
#define RCCE_ERROR_INVALID_ERROR_CODE       (RCCE_ERROR_BASE + 14)
#define RCCE_ERROR_RPC_NOT_ALLOCATED        (RCCE_ERROR_BASE + 15)
#define RCCE_ERROR_RPC_INTERNAL             (RCCE_ERROR_BASE + 16)
#define RCCE_ERROR_MULTIPLE_RPC_REQUESTS    (RCCE_ERROR_BASE + 17)
#define RCCE_ERROR_FDIVIDER                 (RCCE_ERROR_BASE + 18)
#define RCCE_ERROR_FREQUENCY_EXCEEDED       (RCCE_ERROR_BASE + 19)
#define RCCE_ERROR_NO_ACTIVE_RPC_REQUEST    (RCCE_ERROR_BASE + 20)
#define RCCE_ERROR_STALE_RPC_REQUEST        (RCCE_ERROR_BASE + 21)
#define RCCE_ERROR_COMM_UNDEFINED           (RCCE_ERROR_BASE + 22)
#define RCCE_ERROR_ILLEGAL_OP               (RCCE_ERROR_BASE + 23)
#define RCCE_ERROR_ILLEGAL_TYPE             (RCCE_ERROR_BASE + 24)
#define RCCE_ERROR_MALLOC                   (RCCE_ERROR_BASE + 25)
#define RCCE_ERROR_COMM_INITIALIZED         (RCCE_ERROR_BASE + 26)
#define RCCE_ERROR_CORE_NOT_IN_HOSTFILE     (RCCE_ERROR_BASE + 27)
/* Buffer size that holds any string RCCE_error_string returns. */
#define RCCE_MAX_ERROR_STRING               45

/* Arguments of RCCE_debug_set / RCCE_debug_unset. */
#define RCCE_DEBUG_ALL   111111
#define RCCE_DEBUG_SYNCH 111444
#define RCCE_DEBUG_COMM  111555
#define RCCE_DEBUG_RPC   111666
#define RCCE_DEBUG_DEBUG 111888

/* ------------------------------------------------------------------------ */
/* Reductions                                                               */
/* ------------------------------------------------------------------------ */

#define RCCE_NUM_OPS   4
#define RCCE_OP_BASE   23232323
#define RCCE_SUM       (RCCE_OP_BASE + 0)
#define RCCE_MIN       (RCCE_OP_BASE + 1)
#define RCCE_MAX       (RCCE_OP_BASE + 2)
#define RCCE_PROD      (RCCE_OP_BASE + 3)

#define RCCE_TYPE_BASE 63636363
#define RCCE_INT       (RCCE_TYPE_BASE + 0) /* int    */
#define RCCE_LONG      (RCCE_TYPE_BASE + 1) /* long   */
#define RCCE_FLOAT     (RCCE_TYPE_BASE + 2) /* float  */
#define RCCE_DOUBLE    (RCCE_TYPE_BASE + 3) /* double */

/* ------------------------------------------------------------------------ */
/* Types                                                                    */
/* ------------------------------------------------------------------------ */

/* Pointer into an MPB (or into shared DRAM). */
typedef volatile unsigned char *t_vcharp;

/* Flag values. */
#define RCCE_FLAG_SET   1
#define RCCE_FLAG_UNSET 0
typedef int RCCE_FLAG_STATUS;

/*
 * A synchronisation flag in the MPB.  Flags are allocated collectively, so
 * one RCCE_FLAG names the flag at the same offset in every core's MPB.
 *   location      index of the flag inside its line: a byte (0..31), or a
 *                 bit (0..255) under SINGLEBITFLAGS
 *   flag_addr     address (in the caller's MPB) of the byte holding the flag
 *   line_address  address (in the caller's MPB) of the flag's line
 */
typedef struct {
    int location;
    t_vcharp flag_addr;
    t_vcharp line_address;
} RCCE_FLAG;

/*
 * A communicator.  Programs read size, my_rank and member[] directly:
 * member[i] is the RCCE_COMM_WORLD rank of the communicator's rank i.
 */
typedef struct {
    int size;
    int my_rank;
    int initialized;
    int member[RCCE_MAXNP];
    RCCE_FLAG gather;
    RCCE_FLAG release;
} RCCE_COMM;

/* Every participating core, ranks 0..RCCE_num_ues()-1 in core-ID order. */
extern RCCE_COMM RCCE_COMM_WORLD;

/* ------------------------------------------------------------------------ */
/* Start-up and administration                                              */
/* ------------------------------------------------------------------------ */

/* How this translation unit was built, told to the library at init:
   bit 0 single-bit flags, bit 1 the gory interface. */
#ifdef SINGLEBITFLAGS
#define SCCEMU_RCCE_SINGLEBITFLAGS 1
#else
#define SCCEMU_RCCE_SINGLEBITFLAGS 0
#endif
#ifdef GORY
#define SCCEMU_RCCE_GORY 2
#else
#define SCCEMU_RCCE_GORY 0
#endif
#define SCCEMU_RCCE_VARIANT (SCCEMU_RCCE_SINGLEBITFLAGS | SCCEMU_RCCE_GORY)

/*
 * RCCE_init consumes the launcher's arguments (prog NP GHz id_0 .. id_NP-1)
 * and leaves argv[0] followed by the user's arguments.  The call goes to
 * RCCE_init_variant, which also tells the library the program's flag width
 * and RCCE_MAXNP.  The plain RCCE_init (byte flags, RCCE_MAXNP 48) is still
 * exported for callers that take its address.
 */
int RCCE_init_variant(int *argc, char ***argv, int variant, int maxnp);
int RCCE_init(int *argc, char ***argv);
#define RCCE_init(argc, argv) \
    RCCE_init_variant((argc), (argv), SCCEMU_RCCE_VARIANT, RCCE_MAXNP)

int    RCCE_finalize(void);  /* end of the program's use of RCCE     */
double RCCE_wtime(void);     /* wall-clock seconds                    */
int    RCCE_ue(void);        /* rank of the calling core              */
int    RCCE_num_ues(void);   /* number of participating cores         */

/* ------------------------------------------------------------------------ */
/* Off-chip shared memory (collective; same pointer on every core)          */
/* ------------------------------------------------------------------------ */

t_vcharp RCCE_shmalloc(size_t size);
void     RCCE_shfree(t_vcharp ptr);
void     RCCE_shflush(void);  /* make this core's shared-DRAM writes visible */

/* ------------------------------------------------------------------------ */
/* Test-and-set registers: one lock per core, addressed by rank             */
/* ------------------------------------------------------------------------ */

int RCCE_acquire_lock(int ID);
int RCCE_release_lock(int ID);

/* ------------------------------------------------------------------------ */
/* Communicators and synchronisation                                        */
/* ------------------------------------------------------------------------ */

/* Collective over RCCE_COMM_WORLD: members are the ranks r with
   color(r, aux) == color(RCCE_ue(), aux), ordered by rank. */
int  RCCE_comm_split(int (*color)(int, void *), void *aux, RCCE_COMM *comm);
int  RCCE_comm_free(RCCE_COMM *comm);
int  RCCE_comm_size(RCCE_COMM comm, int *size);
int  RCCE_comm_rank(RCCE_COMM comm, int *rank);

/* The library's by-value RCCE_COMM parameters have the layout of RCCE_MAXNP 48.
   A program built with another RCCE_MAXNP passes a copy's address instead, to
   the _p forms, which read it in the layout RCCE_init was told. */
#if RCCE_MAXNP != 48
int RCCE_comm_size_p(const RCCE_COMM *comm, int *size);
int RCCE_comm_rank_p(const RCCE_COMM *comm, int *rank);
#define RCCE_comm_size(comm, size) RCCE_comm_size_p((RCCE_COMM[1]){comm}, (size))
#define RCCE_comm_rank(comm, rank) RCCE_comm_rank_p((RCCE_COMM[1]){comm}, (rank))
#endif
void RCCE_fence(void);
int  RCCE_barrier(RCCE_COMM *comm);

/* ------------------------------------------------------------------------ */
/* Diagnostics                                                              */
/* ------------------------------------------------------------------------ */

/* Copies the text for err_no (< RCCE_MAX_ERROR_STRING bytes with its NUL)
   to error_string and its length to string_length. */
int RCCE_error_string(int err_no, char *error_string, int *string_length);
int RCCE_debug_set(int flag);
int RCCE_debug_unset(int flag);

/* ------------------------------------------------------------------------ */
/* Message passing                                                          */
/* ------------------------------------------------------------------------ */

#ifdef GORY

/* MPB allocation (collective; same offset in every core's MPB). */
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

/* Synchronous send/recv through a user buffer (combuf, chunk bytes) in the
   sender's MPB, with user flags: "sent" lives at the receiver, "ready" at
   the sender. */
int RCCE_send_gory(char *privbuf, t_vcharp combuf, size_t chunk,
                   RCCE_FLAG *ready, RCCE_FLAG *sent, size_t size, int dest);
int RCCE_recv_gory(char *privbuf, t_vcharp combuf, size_t chunk,
                   RCCE_FLAG *ready, RCCE_FLAG *sent, size_t size, int source);
int RCCE_recv_test_gory(char *privbuf, t_vcharp combuf, size_t chunk,
                        RCCE_FLAG *ready, RCCE_FLAG *sent, size_t size,
                        int source, int *test);
#define RCCE_send      RCCE_send_gory
#define RCCE_recv      RCCE_recv_gory
#define RCCE_recv_test RCCE_recv_test_gory

#else /* !GORY */

/* Synchronous send/recv through library buffers and flags.  recv_test
   returns at once with *test == 0 if the sender has not started, otherwise
   completes the receive and sets *test to 1. */
int RCCE_send(char *privbuf, size_t size, int dest);
int RCCE_recv(char *privbuf, size_t size, int source);
int RCCE_recv_test(char *privbuf, size_t size, int source, int *test);

/* Linear collectives; root is a rank within comm. */
int RCCE_bcast(char *buf, size_t num, int root, RCCE_COMM comm);
int RCCE_reduce(char *inbuf, char *outbuf, int num, int type, int op,
                int root, RCCE_COMM comm);
int RCCE_allreduce(char *inbuf, char *outbuf, int num, int type, int op,
                   RCCE_COMM comm);

#if RCCE_MAXNP != 48
int RCCE_bcast_p(char *buf, size_t num, int root, const RCCE_COMM *comm);
int RCCE_reduce_p(char *inbuf, char *outbuf, int num, int type, int op,
                  int root, const RCCE_COMM *comm);
int RCCE_allreduce_p(char *inbuf, char *outbuf, int num, int type, int op,
                     const RCCE_COMM *comm);
#define RCCE_bcast(buf, num, root, comm) \
    RCCE_bcast_p((buf), (num), (root), (RCCE_COMM[1]){comm})
#define RCCE_reduce(in, out, num, type, op, root, comm) \
    RCCE_reduce_p((in), (out), (num), (type), (op), (root), (RCCE_COMM[1]){comm})
#define RCCE_allreduce(in, out, num, type, op, comm) \
    RCCE_allreduce_p((in), (out), (num), (type), (op), (RCCE_COMM[1]){comm})
#endif

#endif /* GORY */

/* ------------------------------------------------------------------------ */
/* Power management                                                         */
/* ------------------------------------------------------------------------ */

#ifdef RC_POWER_MANAGEMENT

/* Pass as a divider to request the default (1600 MHz / 3). */
#define RCCE_POWER_DEFAULT (-99999)

/* An in-flight voltage/frequency change of the caller's power domain. */
typedef struct {
    int release;
    int old_voltage_level;
    int new_voltage_level;
    int old_frequency_divider;
    int new_frequency_divider;
    long long start_cycle;
} RCCE_REQUEST;

int  RCCE_power_domain(void);         /* caller's voltage domain (2x2 tiles) */
int  RCCE_power_domain_master(void);  /* lowest rank in that domain          */
int  RCCE_power_domain_size(void);    /* job's cores in that domain          */
int  RCCE_iset_power(int Fdiv, RCCE_REQUEST *req, int *new_Fdiv,
                     int *new_Vlevel);
int  RCCE_wait_power(RCCE_REQUEST *req);
int  RCCE_set_frequency_divider(int Fdiv, int *new_Fdiv);
void print_dividers(void);            /* prints every tile's clock divider   */

#endif /* RC_POWER_MANAGEMENT */

#ifdef __cplusplus
}
#endif

#endif /* RCCE_H */
