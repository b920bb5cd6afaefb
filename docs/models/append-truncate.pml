/*
 * Append versus truncate, and pwrite (docs/files.md "Append versus
 * truncate").
 *
 * Three hosts: an appender (O_APPEND write of L slots), a truncater
 * (shrink to TT) and a pwriter (one slot inside the file, PW_POS); any
 * one of them may crash at any step (one crash per run); recovery then
 * runs the dead host's FILE_WRITE intent (zero a dead writer's bytes
 * beyond EOF; clear a dead shrinker's BUSY).  A slot stands for a byte
 * (and a page: clearing and a writer's own zeroing work per slot).  The
 * file starts with S0 slots of INIT.  Sequential consistency stands for
 * the code's full fences (the fence before each look).
 *
 * Checked at the end of every run:
 *   eof      every slot at or past the size is zero (bytes a cut write
 *            stored never show again, whatever extends the file later);
 *   no_rise  an append whose reservation came before the truncate's
 *            lowering never moves the size back up over the cut;
 *   serial   without a crash the file is what a serial order gives:
 *            append-then-truncate when the reservation came first, else
 *            truncate-then-append; the pwrite's slot, when inside the
 *            size, holds the pwrite's or the append's byte -- unless one
 *            of the residual races of docs/files.md happened (ghost
 *            "late": a cut writer stored or zeroed over a slot another
 *            writer stored after the truncate; a reservation whose size
 *            came back to the value it read through a lowering and a
 *            regrowth, ABA).  pan does reach both.
 *
 * -DOLD_APPEND: the append before the fix (no gate, CAS-to-maximum at
 * the end); pan finds the violation.
 */

#define N	4		/* slots */
#define S0	2		/* initial size */
#define L	2		/* append length */
#define TT	1		/* truncate target */
#define PW_POS	1		/* the pwrite's slot (inside the file) */
#define M	4		/* shrink number modulus (15 bits in the code) */

#define INIT	1
#define APP	2
#define PW	3

byte slot[N];
byte size = S0;
byte last_seq = 0;		/* the parent word: number, ... */
bool last_busy = false;		/* ... BUSY ... */
byte last_t = 0;		/* ... and target */
byte count = 0;			/* the rdev word */

bool crashed = false;		/* one crash per run, any host */
bool a_crashed = false;
bool a_intent = false;		/* the appender's FILE_WRITE intent */
byte a_off;
bool p_crashed = false;
bool p_intent = false;
bool t_crashed = false;
bool t_intent = false;		/* the shrinker's intent: its word */
byte t_word_seq;
bool a_fin = false;
bool t_fin = false;
bool p_fin = false;
bool p_done = false;		/* the pwrite returned */

bool lowered = false;		/* ghost: the truncate lowered the size */
byte post[N];			/* ghost: who stored a slot after that */
bool late = false;		/* ghost: a residual race of docs/files.md
				 * happened: a writer stored or zeroed over
				 * a slot another writer stored after the
				 * lowering, or the size ABA of a reservation */
bool res_first = false;		/* ghost: the reservation came before it */

#define CRASH(who)							\
	if								\
	:: atomic { !crashed -> crashed = true; who = true };		\
	   goto dead							\
	:: true -> skip							\
	fi

/* a writer's store (or its own zeroing) of slot p */
inline put(p, v, me)
{
	atomic {
		if
		:: lowered && post[p] != 0 && post[p] != me -> late = true
		:: else -> skip
		fi;
		slot[p] = v;
		if
		:: lowered -> post[p] = me
		:: else -> skip
		fi
	}
}

/* gate_look() and gate_lost() of core/file.c, for [pos, pos + 1) */
inline gate_look(inside)
{
	atomic { seq = last_seq; t = last_t; busy = last_busy };
	k = (seq + M - g_seq) % M;
	if
	:: k >= 1 && t < cap -> cap = t
	:: else -> skip
	fi;
	if
	:: k > 1 && inside && size < cap ->
		cap = (size > pos -> size : pos)
	:: else -> skip
	fi;
	g_seq = seq
}

proctype appender()
{
	byte s, pos, cap = 255, g_seq, seq, t, k;
	bool busy;

res:
	s = size;
	g_seq = last_seq;		/* the gate, between read and CAS */
	atomic {
		if
		:: size == s -> size = s + L; res_first = !lowered;
			/* ghost: the size came back to s after a lowering
			 * announced since our gate (ABA) */
			if
			:: lowered && last_seq != g_seq ->
				late = true
			:: else -> skip
			fi
		:: else -> goto res
		fi
	}
	a_off = s;
	a_intent = true;
	CRASH(a_crashed);
	pos = s;
	do
	:: pos < s + L && pos < cap ->
		put(pos, APP, APP);
		CRASH(a_crashed);
#ifndef OLD_APPEND
		gate_look(true);
		if
		:: cap <= pos ->	/* gate_zero_from() */
			if
			:: busy || pos >= size -> put(pos, 0, APP)
			:: else -> skip
			fi;
			break
		:: else -> skip
		fi;
		CRASH(a_crashed);
#endif
		pos++
	:: else -> break
	od;
#ifdef OLD_APPEND
	atomic {			/* CAS-to-maximum */
		if
		:: size < s + L -> size = s + L
		:: else -> skip
		fi
	}
#endif
	a_intent = false;
dead:
	a_fin = true
}

proctype pwriter()
{
	byte pos = PW_POS, cap = 255, g_seq, seq, t, k, s;
	bool busy;

	atomic {			/* the gate; BUSY: ordered before it */
		g_seq = last_seq;
		if
		:: last_busy -> cap = last_t
		:: else -> skip
		fi
	}
	p_intent = true;		/* set only when extending in the code */
	if
	:: pos < cap ->
		put(pos, PW, PW);
		CRASH(p_crashed);
		gate_look(false);
		if
		:: cap <= pos ->
			if
			:: busy || pos >= size -> put(pos, 0, PW)
			:: else -> skip
			fi
		:: else -> skip
		fi;
		CRASH(p_crashed)
	:: else -> skip
	fi;
	/* size_max_gated: a look before each CAS try */
	do
	:: cap > pos ->
		s = size;
		if
		:: s >= pos + 1 -> break
		:: else -> skip
		fi;
		gate_look(false);
		if
		:: cap <= pos -> break
		:: else -> skip
		fi;
		atomic {
			if
			:: size == s -> size = pos + 1; break
			:: else -> skip
			fi
		}
	:: else -> break
	od;
	p_intent = false;
	p_done = true;
dead:
	p_fin = true
}

proctype truncater()
{
	byte cur, i;

again:
	cur = size;
	if
	:: cur <= TT -> goto done
	:: else -> skip
	fi;
	atomic {			/* intent first, then the parent CAS */
		last_seq = (last_seq + 1) % M; last_busy = true;
		last_t = TT; t_word_seq = last_seq; t_intent = true
	};
	CRASH(t_crashed);
	count++;
	if
	:: size != cur -> goto again
	:: else -> skip
	fi;
	i = TT;
	do
	:: i < N -> slot[i] = 0; i++; CRASH(t_crashed)
	:: else -> break
	od;
	atomic {
		if
		:: size == cur -> size = TT; lowered = true
		:: else -> goto again
		fi
	}
	CRASH(t_crashed);		/* BUSY cleared right after */
done:
	atomic {			/* shrink_done: CAS from its word */
		if
		:: t_intent && last_seq == t_word_seq -> last_busy = false
		:: else -> skip
		fi;
		t_intent = false
	}
dead:
	t_fin = true
}

init
{
	byte i;

	atomic {
		i = 0;
		do
		:: i < S0 -> slot[i] = INIT; i++
		:: else -> break
		od;
		run appender();
		run truncater();
		run pwriter()
	}
	(a_fin && t_fin && p_fin);
	/* recovery of a dead host from its intent */
	if
	:: a_crashed && a_intent ->
		i = (size > a_off -> size : a_off);
		do
		:: i < a_off + L && i < N -> slot[i] = 0; i++
		:: else -> break
		od
	:: p_crashed && p_intent && size <= PW_POS -> slot[PW_POS] = 0
	:: t_crashed && t_intent && last_seq == t_word_seq ->
		last_busy = false
	:: else -> skip
	fi;
	/* eof */
	i = size;
	do
	:: i < N -> assert(slot[i] == 0); i++
	:: else -> break
	od;
	/* no_rise */
	assert(!(lowered && res_first) || size == TT ||
	       (p_done && size == PW_POS + 1));
	/* serial (not after the residual race) */
	if
	:: !crashed && !late ->
		i = 0;
		do			/* a row without holes */
		:: i < size -> assert(slot[i] != 0); i++
		:: else -> break
		od;
		i = 0;
		do			/* the cut keeps the head */
		:: i < TT -> assert(slot[i] == INIT ||
				    (i == PW_POS && slot[i] == PW)); i++
		:: else -> break
		od;
		if
		:: PW_POS < size ->
			assert(slot[PW_POS] == PW || slot[PW_POS] == APP)
		:: else -> skip
		fi;
		if
		:: res_first ->		/* append, then truncate */
			assert(size == TT || (p_done && size == PW_POS + 1))
		:: else ->		/* truncate, then append */
			assert(a_off == TT || a_off == PW_POS + 1);
			assert(size == a_off + L);
			i = a_off;
			do
			:: i < a_off + L ->
				assert(slot[i] == APP ||
				       (i == PW_POS && slot[i] == PW)); i++
			:: else -> break
			od
		fi
	:: else -> skip
	fi
}
