// SPDX-License-Identifier: GPL-2.0
/*
 * stormgate.so - preloaded into the storm's ucmatose clients by storm.py.
 *
 * Under emulation starting one client takes a good part of a second, so
 * hundreds of them started one after the other would trickle in instead
 * of storming.  This holds each client at its first rdma_resolve_addr(),
 * once it is set up, until the gate opens: the FIFO named by $STORM_GATE
 * is opened for reading, which blocks until storm.py opens it for writing
 * and then lets every client through at the same moment.  It says
 * "storm-gate: waiting" first, so that storm.py knows when all are there.
 * It also makes stdout line-buffered, so that each line can be timed as
 * it comes.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>

typedef int resolve_fn(struct rdma_cm_id *, struct sockaddr *,
		       struct sockaddr *, int);

__attribute__((constructor)) static void line_buffered(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
}

int rdma_resolve_addr(struct rdma_cm_id *id, struct sockaddr *src,
		      struct sockaddr *dst, int timeout_ms)
{
	static resolve_fn *real;
	static int passed;
	const char *gate = getenv("STORM_GATE");
	int fd;

	if (!real)
		real = (resolve_fn *)dlsym(RTLD_NEXT, "rdma_resolve_addr");
	if (!passed && gate) {
		passed = 1;
		printf("storm-gate: waiting\n");
		fd = open(gate, O_RDONLY);
		if (fd >= 0)
			close(fd);
	}
	return real(id, src, dst, timeout_ms);
}
