/*
 * Changes in flight: a directory's change counter vouches for a cached
 * name (docs/kernel.md "Changes in flight", format 13).
 *
 * The counter is one word: a count and the entry changes in flight.  A
 * writer host names the directory in its intent, raises the word, publishes
 * its change of the entries (ver + 1), and settles (count + 1, flight - 1
 * in one add).  A writer may die at any step.  A recoverer rolls a dead
 * host's op (raise, maybe publish: a roll forward, settle) and then heals:
 * it loads the word, scans the other hosts' intents one by one, and if
 * none names the directory, CASes the word to (count + 1, 0 in flight).
 * A reader keeps a looked-up answer only under a word loaded before it
 * that showed nothing in flight, and trusts the answer while a later load
 * of the word is equal: at that moment the answer must be the current one.
 *
 * A host declared dead may run on as a zombie (ZOMBIE): one that passed
 * its fence check before the declaration makes its raise later, at any
 * moment, recovered or not, and never publishes or settles; that raise is
 * left for a heal.  With ONLINE, a healer host (daxfs_change_seen) heals
 * HEALS times at any moment, with no lane skipped: load the word, scan
 * every intent, CAS.
 *
 * Bug switches (each must make pan find a stale answer trusted):
 *   BUG_NO_RAISE     format 12: the word moves only after the publish
 *   BUG_RAISE_FIRST  the raise comes before the intent names the directory
 *   BUG_HEAL_NO_SCAN the heal clears what is in flight without the scan
 *                    (the recoverer's, and the online healer's)
 *
 * Defines: N writers (2), OPS ops each (2), MAXCRASH deaths (1), R reader
 * rounds (2), HEALS online heals (2).
 */
#ifndef N
#define N 2
#endif
#ifndef OPS
#define OPS 2
#endif
#ifndef MAXCRASH
#define MAXCRASH 1
#endif
#ifndef R
#define R 2
#endif
#ifndef HEALS
#define HEALS 2
#endif

byte count = 1;		/* the word: count and flight, changed together */
byte flight = 0;
byte ver = 0;		/* the directory's entries: one more per publish */
bool intent[N];		/* host i's intent names the directory */
bool dead[N];
byte crashes = 0;

/* a writer may die before any step while deaths are left */
#define MAYBE_DIE(i) \
	if \
	:: crashes < MAXCRASH -> crashes++; dead[i] = true; goto gone \
	:: true \
	fi

#ifdef ZOMBIE
/* ... or, between its fence check and its raise, be declared dead and
 * raise later, at any moment (a stopped host resumed) */
#define MAYBE_ZOMBIE(i) \
	if \
	:: crashes < MAXCRASH -> crashes++; dead[i] = true; goto zombie \
	:: true \
	fi
#else
#define MAYBE_ZOMBIE(i)	skip
#endif

#ifdef BUG_NO_RAISE
#define RAISE		skip
#define SETTLE		count++
#else
#define RAISE		flight++
#define SETTLE		atomic { count++; flight-- }
#endif

proctype writer(byte i)
{
	byte k = 0;

	do
	:: k < OPS ->
#ifdef BUG_RAISE_FIRST
		MAYBE_DIE(i);
		RAISE;
		MAYBE_DIE(i);
		intent[i] = true;
#else
		MAYBE_DIE(i);
		intent[i] = true;
		MAYBE_DIE(i);
		MAYBE_ZOMBIE(i);
		RAISE;
#endif
		MAYBE_DIE(i);
		ver++;			/* the publishing CAS */
		MAYBE_DIE(i);
		SETTLE;
		MAYBE_DIE(i);
		intent[i] = false;
		k++
	:: else -> break
	od;
	goto gone;
zombie:
	RAISE;		/* fenced from here on: no publish, no settle */
gone:
	skip
}

/* The heal (core/flight.c daxfs_change_heal): the word, then the scan of
 * every intent but skip's (N: none skipped), then the CAS. */
inline heal(skip_lane)
{
	atomic { c = count; f = flight };
	if
	:: f > 0 ->
		named = false;
#ifndef BUG_HEAL_NO_SCAN
		j = 0;
		do
		:: j < N && j != skip_lane -> named = named || intent[j]; j++
		:: j < N && j == skip_lane -> j++
		:: j >= N -> break
		od;
#endif
		if
		:: !named ->
			atomic {
				if
				:: count == c && flight == f ->
					count = c + 1; flight = 0
				:: else -> skip
				fi
			}
		:: else -> skip
		fi
	:: else -> skip
	fi;
	d_step { c = 0; f = 0; j = 0; named = false }	/* fewer states */
}

/* Recovers each dead host once: its own raise around the roll, then the
 * heal of what the dead host may have left. */
proctype recoverer()
{
	byte i = 0, j, c, f;
	bool named;

	do
	:: i < N ->
		if
		:: dead[i] && intent[i] ->
			RAISE;
			if
			:: ver++	/* a roll forward publishes */
			:: skip
			fi;
			SETTLE;
			heal(i);	/* skipping the dead lane */
			intent[i] = false;
			i++
		:: dead[i] && !intent[i] -> i++
		:: !dead[i] -> i++	/* alive, or not dead yet: passed over */
		fi
	:: else -> break
	od
}

#ifdef ONLINE
/* A host that kept seeing the word with changes in flight */
proctype healer()
{
	byte h = 0, j, c, f;
	bool named;

	do
	:: h < HEALS -> heal(N); h++
	:: else -> break
	od
}
#endif

proctype reader()
{
	byte r = 0, c1, f1, v;

	do
	:: r < R ->
		atomic { c1 = count; f1 = flight };	/* the vouching word */
		v = ver;				/* the lookup */
		if
		:: f1 == 0 ->
			/* a later revalidation: trusted while the word is equal */
			atomic {
				if
				:: count == c1 && flight == f1 ->
					assert(v == ver)
				:: else -> skip
				fi
			}
		:: else -> skip	/* taken mid-change: not kept */
		fi;
		r++
	:: else -> break
	od
}

init
{
	byte i = 0;

	atomic {
		do
		:: i < N -> run writer(i); i++
		:: else -> break
		od;
		run recoverer();
#ifdef ONLINE
		run healer();
#endif
		run reader()
	}
}
