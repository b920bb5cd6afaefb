/*
 * The mark of a rewrite in a regular file's change counter (format 14,
 * docs/files.md "The change counter of a rewrite").
 *
 * The word is a count and a mark, changed together.  A writer rewrites
 * its own cell of the file (version k at its k-th write), fences, loads
 * the word and, when the mark is clear, CASes it set; then its write
 * returns (done[i] = k).  Its store of the bytes goes through a store
 * buffer (x86-TSO): it reaches memory at any later moment, and the fence
 * waits for it; a later store (done) never passes it.  A folder (a
 * getattr on a writable host) CASes a marked word to (count + 1, clear)
 * at any moment.  A front end loads the word (folding it first or not),
 * and if it is unmarked reads every cell; later it loads what the
 * writers have finished, then the word again: equal means the copy is
 * current, so each cell must hold at least the finished version.
 *
 * Bug switches (each must make pan find a stale copy trusted):
 *   BUG_MARK_FIRST  the look at the word comes before the bytes are
 *                   stored (tests/test_change_bug.py's defect)
 *   BUG_NO_FENCE    no fence: the look may pass the buffered store
 *   BUG_PLAIN_MARK  the mark is a plain store of the word the writer
 *                   loaded, not a CAS: it can undo a fold, and the count
 *                   comes back to a value a front end trusted
 *
 * Defines: N writers (2), OPS rewrites each (2), R front-end rounds (2),
 * FOLDS folds by the folder (2).
 */
#ifndef N
#define N 2
#endif
#ifndef OPS
#define OPS 2
#endif
#ifndef R
#define R 2
#endif
#ifndef FOLDS
#define FOLDS 2
#endif

byte count = 1;		/* the word */
bool mark = false;
byte cell[N];		/* the bytes in memory */
byte buf[N];		/* a writer's store buffer: one store */
bool pending[N];
byte done[N];		/* the version of the writer's last finished write */

/* the store buffer drains at any moment */
proctype drain(byte i)
{
end:	do
	:: atomic { pending[i] -> cell[i] = buf[i]; pending[i] = false }
	od
}

/* the look and the mark: set it when clear, by CAS (or a plain store) */
inline look_and_mark(i)
{
	byte lc;
	bool lm;

	atomic { lc = count; lm = mark };
	do
	:: lm -> break
	:: else ->
#ifdef BUG_PLAIN_MARK
		atomic { count = lc; mark = true };
		break
#else
		atomic {
			if
			:: count == lc && mark == lm -> mark = true; lm = true
			:: else -> lc = count; lm = mark
			fi
		}
#endif
	od
}

proctype writer(byte i)
{
	byte k = 0;

	do
	:: k < OPS ->
		k++;
#ifdef BUG_MARK_FIRST
		look_and_mark(i);
#endif
		atomic { !pending[i] -> buf[i] = k; pending[i] = true };
#ifndef BUG_MARK_FIRST
#ifndef BUG_NO_FENCE
		!pending[i];		/* the fence */
#endif
		look_and_mark(i);
#endif
		/* the write returns: this store cannot pass the bytes' */
		atomic { !pending[i] -> done[i] = k }
	:: else -> break
	od
}

proctype folder()
{
	byte f = 0;

	do
	:: f < FOLDS ->
		atomic {
			if
			:: mark -> count++; mark = false
			:: else -> skip
			fi
		};
		f++
	:: else -> break
	od
}

proctype front()
{
	byte r = 0, i, c0, c1;
	bool m0, m1;
	byte copy[N], fin[N];

	do
	:: r < R ->
		r++;
		/* a getattr folds first; a peek does not */
		if
		:: atomic { mark -> count++; mark = false }
		:: true
		fi;
		atomic { c0 = count; m0 = mark };
		if
		:: m0 -> goto next	/* marked: bytes may be changing */
		:: else -> skip
		fi;
		for (i : 0 .. N - 1) {
			copy[i] = cell[i]
		}
		for (i : 0 .. N - 1) {
			fin[i] = done[i]
		}
		atomic { c1 = count; m1 = mark };
		if
		:: c1 == c0 && m1 == m0 ->
			for (i : 0 .. N - 1) {
				assert(copy[i] >= fin[i])
			}
		:: else -> skip
		fi;
next:		skip
	:: else -> break
	od
}

init
{
	byte i;

	atomic {
		for (i : 0 .. N - 1) {
			run drain(i);
			run writer(i)
		}
		run folder();
		run front()
	}
}
