// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Host participant of the 16-byte CAS check (cas16.h):
 *	hostcas16 SHM_FILE ITERS PARTIES	(ITERS 0: until the others finish)
 * prints one "cas16: RESULT" line, exit 0 when the check ran.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include "cas16.h"

int main(int argc, char **argv)
{
	struct cas16_stats st = { 0 };
	u64 *w;
	int fd, err;

	if (argc != 4) {
		fprintf(stderr, "usage: hostcas16 SHM_FILE ITERS PARTIES\n");
		return 2;
	}
	fd = open(argv[1], O_RDWR);
	if (fd < 0) {
		perror(argv[1]);
		return 2;
	}
	w = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (w == MAP_FAILED) {
		perror("mmap");
		return 2;
	}
	err = cas16_hammer(w, strtoull(argv[2], NULL, 0), 0,
			   strtoull(argv[3], NULL, 0), &st);
	printf("cas16: RESULT err=%d lo=%llu hi=%llu done=%llu retries=%llu torn=%llu bad_pairs=%llu\n",
	       err, st.lo, st.hi, st.done, st.retries, st.torn, st.bad_pairs);
	return err ? 1 : 0;
}
