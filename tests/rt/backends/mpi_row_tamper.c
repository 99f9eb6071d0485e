/* A peer that sends more than the agreement's rows have room for (test_mpi_row_tamper.py): an
 * MPI profiling layer, preloaded, that rewrites the first part of each agreement row (tag 7303,
 * src/rt/backends/mpi/mpi_backend.h) rank 1 sends, as another build of chorus might send it.
 * CHORUS_TEST_ROW=length: the part's 8 bytes of row length say 1 MiB; CHORUS_TEST_ROW=part: the
 * part is 64 bytes longer than any first part may be (4032). Other messages pass unchanged. */
#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { kAgreementTag = 7303, kPartBytes = 4032, kExtra = 64 };
static char tampered[kPartBytes + kExtra]; /* sent eagerly: complete before the next row */

int MPI_Isend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request* request) {
  const char* mode = getenv("CHORUS_TEST_ROW");
  int me = -1;
  uint64_t length = 0;
  if (mode == NULL || tag != kAgreementTag || type != MPI_BYTE || count < 8 || count > kPartBytes)
    return PMPI_Isend(buf, count, type, dest, tag, comm, request);
  PMPI_Comm_rank(MPI_COMM_WORLD, &me);
  memcpy(&length, buf, sizeof length);
  /* A first part opens with the row's length, at least its own; later parts with data. */
  if (me != 1 || length < (uint64_t)count || length > (1u << 16))
    return PMPI_Isend(buf, count, type, dest, tag, comm, request);
  memset(tampered, 0, sizeof tampered);
  memcpy(tampered, buf, (size_t)count);
  if (strcmp(mode, "length") == 0) {
    length = 1u << 20;
    memcpy(tampered, &length, sizeof length);
    return PMPI_Isend(tampered, count, type, dest, tag, comm, request);
  }
  return PMPI_Isend(tampered, kPartBytes + kExtra, type, dest, tag, comm, request);
}
