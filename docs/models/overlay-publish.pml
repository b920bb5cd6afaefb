/*
 * Overlay bucket publication (core/overlay.c, docs/overlay.md): N hosts
 * insert the same key (each its own value) into a window of W buckets,
 * through the claimed state {key|PENDING, claim token} named by the lane
 * intent, published by one 16-byte CAS {key|PENDING, token} -> {key,
 * value}.  Any host may die at any step (at most MAXCRASH of them); a
 * survivor recovers a dead host by tombing the pending claim its intent
 * names (an 8-byte CAS on the key word, which may hit a live claim that
 * reused the bucket).  With ZOMBIE, a live host may instead be declared
 * dead and recovered while it runs on: its fence checks stop it, but not
 * between a check and the CAS after it.  A reader looks the key up
 * meanwhile.
 *
 * Checked (spin -a; ./pan): the assertions below and no invalid end
 * state (nobody waits forever on a dead claimer's PENDING bucket).
 *   - a reader that finds the key published gets the value of the host
 *     whose CAS published that bucket (pitfall 1 of the brief);
 *   - at most one insert succeeds and at most one bucket is published;
 *   - at the end no bucket is left PENDING, the published value is its
 *     publisher's, every host not declared dead returned OK or EEXIST,
 *     and EEXIST means the key is published.
 * Bug switches (each makes pan find a violation):
 *   -DBUG_PITFALL1: the public code's publication (value stored into a
 *    FREE bucket, then one key CAS): a reader gets the loser's value.
 *   -DBUG_PLAIN_VALUE: this code before the claim token (value stored
 *    with a plain store while pending, then an 8-byte key CAS): a claimer
 *    whose claim a recoverer withdrew overwrites the value another host
 *    published in the same bucket since.
 */
#ifndef N
#define N		3
#endif
#ifndef W
#define W		3
#endif
#ifndef MAXCRASH
#define MAXCRASH	1
#endif
#ifndef READS
#define READS		1	/* lookups by the reader */
#endif

#define EMPTY	0
#define PEND	1	/* key | PENDING */
#define KEY	2	/* key published */
#define TOMB	3
#define NONE	255

#define R_RUN	0
#define R_OK	1
#define R_EEXIST 2
#define R_NOSPC	3
#define R_STALE	4	/* fenced: declared dead meanwhile */

/* V words: 0, a value (host + 1) or a claim token (TOK(host)) */
#define TOK(x)	(10 + (x))

byte K[W];		/* key words */
byte V[W];		/* value words */
byte pub[W];		/* ghost: host + 1 whose CAS published the bucket */
byte intent[3];		/* lane intent OV_INSERT: the claimed bucket */
bool zombies;		/* ZOMBIE: live hosts may be declared dead */
bool crashed[3];	/* stopped for good */
bool declared[3];	/* declared dead (crashed, or a zombie) */
bool recovered[3];
byte result[3];
byte crashes;		/* hosts declared dead */
byte finished;		/* hosts that returned or stopped */
byte wins;		/* ghost: successful inserts */

/* a crash may happen here: the host stops for good (a zombie, already
 * declared dead, just runs on: its stopping for good is covered by its
 * next CAS failing) */
#define CRASH \
	if \
	:: atomic { crashes < MAXCRASH && !declared[h] -> \
		crashes++; crashed[h] = 1; declared[h] = 1; finished++ }; \
		goto dead \
	:: true \
	fi

/* daxfs_fenced(): our slot was declared dead */
#define FENCE \
	if \
	:: declared[h] -> result[h] = R_STALE; goto done \
	:: else \
	fi

/* the lane of a host not yet recovered names bucket b (ov_owner skips
 * FREE slots: a recovered zombie's late intent names nothing) */
#define NAMED(b) \
	(intent[0] == b && !recovered[0] || intent[1] == b && !recovered[1] || \
	 N > 2 && intent[2] == b && !recovered[2])

/* ov_wait_pending: until the claim resolves; a dead owner is recovered
 * by the Recoverer (the waiter triggers it in the real code) */
inline wait_pending(b)
{
	do
	:: K[b] != PEND -> break
	:: K[b] == PEND ->
		/* a claim no lane names (real code: seen so twice) is
		 * withdrawn by the waiter; else wait for its owner or
		 * its owner's recoverer */
		if
		:: !NAMED(b) -> atomic { if :: K[b] == PEND -> K[b] = TOMB :: else fi }
		:: else -> (K[b] != PEND || !NAMED(b))
		fi
	od
}

proctype Ins(byte h)
{
	byte i, f, fk, fv, k, r;
	bool ok;

retry:
	f = NONE;
	i = 0;
	do
	:: i < W ->
		k = K[i];
		if
		:: k == EMPTY || k == TOMB ->
			if :: f == NONE -> f = i; fk = k :: else fi;
			if :: k == EMPTY -> break :: else fi
		:: k == KEY ->
			if
			:: V[i] != 0 -> result[h] = R_EEXIST; goto done
			:: else
			fi
		:: k == PEND ->
			wait_pending(i);
			if
			:: K[i] == KEY && V[i] != 0 -> result[h] = R_EEXIST; goto done
			:: else -> goto retry
			fi
		fi;
		i++
	:: else -> break
	od;
	if
	:: f == NONE -> result[h] = R_NOSPC; goto done
	:: else
	fi;
#ifdef BUG_PITFALL1
	/* the public code's publication: value first, then the key CAS */
	CRASH;
	V[f] = h + 1;
	CRASH;
	atomic {
		if
		:: K[f] == fk -> K[f] = KEY; pub[f] = h + 1; ok = true
		:: else -> ok = false
		fi
	}
	if
	:: !ok -> goto retry
	:: else
	fi;
	wins++;
	result[h] = R_OK;
	goto done;
#endif
	FENCE;
	CRASH;
	intent[h] = f;
	FENCE;
	CRASH;
	fv = V[f];
	/* the claim: 16-byte CAS {fk, fv} -> {key|PENDING, token} */
	atomic {
		if
		:: K[f] == fk && V[f] == fv -> K[f] = PEND; V[f] = TOK(h); ok = true
		:: else -> ok = false
		fi
	}
	if
	:: !ok ->
		CRASH;
		if :: !declared[h] -> intent[h] = NONE :: else fi;
		goto retry
	:: else
	fi;
	CRASH;
	/* ov_rescan: 0 publish, 1 lost (retry), 2 published copy */
	r = 0;
	i = 0;
	do
	:: i < W && i == f -> i++
	:: i < W && i != f ->
		k = K[i];
		if
		:: k == EMPTY -> break
		:: k == PEND && i < f -> r = 1; break
		:: k == PEND && i > f -> wait_pending(i); k = K[i]
		:: else
		fi;
		if
		:: k == KEY && V[i] != 0 -> r = 2; break
		:: else
		fi;
		i++
	:: else -> break
	od;
	if
	:: r != 0 ->
		FENCE;
		CRASH;
		atomic { if :: K[f] == PEND -> K[f] = TOMB :: else fi }
		CRASH;
		if :: !declared[h] -> intent[h] = NONE :: else fi;
		if
		:: r == 2 -> result[h] = R_EEXIST; goto done
		:: else -> goto retry
		fi
	:: else
	fi;
	FENCE;
	CRASH;
#ifdef BUG_PLAIN_VALUE
	V[f] = h + 1;
	CRASH;
	atomic {
		if
		:: K[f] == PEND -> K[f] = KEY; pub[f] = h + 1; wins++; ok = true
		:: else -> ok = false
		fi
	}
#else
	/* ov_publish: 16-byte CAS {key|PENDING, token} -> {key, value} */
	atomic {
		if
		:: K[f] == PEND && V[f] == TOK(h) ->
			K[f] = KEY; V[f] = h + 1; pub[f] = h + 1; wins++; ok = true
		:: else -> ok = false
		fi
	}
#endif
	if
	:: !ok ->	/* withdrawn: not ours any more */
		CRASH;
		if :: !declared[h] -> intent[h] = NONE :: else fi;
		goto retry
	:: else
	fi;
	CRASH;
	if :: !declared[h] -> intent[h] = NONE :: else fi;
	result[h] = R_OK;
done:
	finished++;
dead:
	skip
}

/* tomb_if_pending on the bucket the dead lane names, then the intent
 * is cleared (daxfs_ov_recover_lane) */
inline recover(x)
{
	atomic {
		if
		:: intent[x] != NONE && K[intent[x]] == PEND -> K[intent[x]] = TOMB
		:: else
		fi
	}
	intent[x] = NONE;
	recovered[x] = 1
}

#ifdef ZOMBIE
/* a live host whose lease ran out while it was stopped is declared dead */
#define DECLARE(x) \
	:: atomic { x < N && crashes < MAXCRASH && !declared[x] && \
		    result[x] == R_RUN -> \
		crashes++; declared[x] = 1 }
#else
#define DECLARE(x)
#endif

/* Any survivor recovering a dead host. */
proctype Recoverer()
{
	do
	:: declared[0] && !recovered[0] -> recover(0)
	:: declared[1] && !recovered[1] -> recover(1)
	:: N > 2 && declared[2] && !recovered[2] -> recover(2)
	DECLARE(0)
	DECLARE(1)
	DECLARE(2)
	:: finished == N &&
	   crashes == recovered[0] + recovered[1] + recovered[2] -> break
	od
}

/* lookup (ov_find): the value belongs to the key only if K did not
 * change around the read */
proctype Reader()
{
	byte i, k, v, n;

	for (n : 1 .. READS) {
		i = 0;
		do
		:: i < W ->
			k = K[i];
			if
			:: k == EMPTY -> break
			:: k == KEY ->
				v = V[i];
				if
				:: K[i] == KEY && v != 0 ->
					assert(v == pub[i]);
					break
				:: else
				fi
			:: else
			fi;
			i++
		:: else -> break
		od
	}
}

init
{
	byte h, i, nkey;

	atomic {
#ifdef ZOMBIE
		zombies = true;
#endif
		for (h : 0 .. N - 1) {
			intent[h] = NONE
		}
		h = 0;
		for (h : 0 .. N - 1) {
			run Ins(h)
		}
		run Recoverer();
		run Reader()
	}
	_nr_pr == 1;
	assert(wins <= 1);
	nkey = 0;
	for (i : 0 .. W - 1) {
		/* a zombie's claim made after its recovery is left PENDING
		 * (fenced, it writes nothing more), but no lane names it:
		 * the next waiter (or fsck) withdraws it */
		assert(K[i] != PEND || zombies && !NAMED(i));
		if
		:: K[i] == KEY -> nkey++; assert(V[i] == pub[i])
		:: else
		fi
	}
	assert(nkey <= 1);
	for (h : 0 .. N - 1) {
		if
		:: !declared[h] ->
			assert(result[h] == R_OK || result[h] == R_EEXIST)
		:: else
		fi;
		assert(result[h] != R_EEXIST || nkey == 1)
	}
}
