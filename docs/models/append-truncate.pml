/*
 * Append versus truncate, and pwrite: the write gate (docs/files.md
 * "Append versus truncate", core/filegate.c).
 *
 * Three hosts: an appender (O_APPEND write of L slots), a pwriter (one
 * slot, PW_POS, inside the initial file) and a truncater (shrink to TT).
 * Any one of them may crash at any step (one crash per run); a survivor
 * then recovers it at any later moment, concurrently with the others, as
 * a host that finds it dead does: its FILE_WRITE intent goes, and a dead
 * shrinker's gate opens.  A slot stands for a byte and for a page
 * (clearing works per slot).  The file starts with S0 slots of INIT.
 * Sequential consistency stands for the code's full fences (after a
 * writer's intent store, after the shrinker's gate CAS).
 *
 * Checked at the end of every run, with or without a crash: the file
 * (size and every slot) is what some serial order of the three calls
 * gives, the append at the offset it returned; a call whose host died
 * may be missing, done, or done in part (a torn append: its slots hold
 * its byte or zero; a partly done truncate: the size unchanged, slots at
 * or past TT zero or not; a dead pwrite's slot may hold its byte without
 * the size covering it).  No exemptions.
 *
 * -DOLD_APPEND: the append of defect 2 (no gate, CAS-to-maximum at the
 * end); pan finds an outcome no serial order gives.
 * -DZERO_RECOVERY: recovery zeroes what a dead write left beyond EOF (the
 * code before format version 4); pan finds it zeroing a live append.
 */

#define N	4		/* slots */
#define S0	2		/* initial size */
#define L	2		/* append length */
#define TT	1		/* truncate target */
#define PW_POS	1		/* the pwrite's slot */

#define INIT	1
#define APP	2
#define PW	3

#define OP_A	0
#define OP_P	1
#define OP_T	2

byte slot[N];
byte size = S0;
byte gate = 0;			/* the parent word: 0 open, 1 the shrinker */

bool a_int = false;		/* FILE_WRITE intents in the lanes */
bool p_int = false;
bool t_int = false;
byte p_from;			/* the pwrite's intent range [p_from, +1) */

bool crashed = false;		/* one crash per run, any host */
bool a_dead = false;
bool p_dead = false;
bool t_dead = false;
bool recovered = false;
bool a_fin = false;
bool p_fin = false;
bool t_fin = false;

byte a_off = 255;		/* the append's returned offset */

#define CRASH(who)							\
	if								\
	:: atomic { !crashed -> crashed = true; who = true };		\
	   goto dead							\
	:: true -> skip							\
	fi

/* daxfs_gate_enter(): intent, fence, look; closed: withdraw and wait */
#define GATE_ENTER(intent, who)						\
enter:									\
	intent = true;							\
	CRASH(who);							\
	if								\
	:: gate != 0 ->							\
		intent = false;						\
		(gate == 0);						\
		goto enter						\
	:: else -> skip							\
	fi

proctype appender()
{
	byte s, pos;

#ifndef OLD_APPEND
	GATE_ENTER(a_int, a_dead);
#endif
	atomic { s = size; size = s + L };	/* the reserving CAS */
	a_off = s;
	CRASH(a_dead);
	pos = s;
	do
	:: pos < s + L -> slot[pos] = APP; pos++; CRASH(a_dead)
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
	a_int = false;
dead:
	a_fin = true
}

proctype pwriter()
{
	p_from = PW_POS;
	GATE_ENTER(p_int, p_dead);
	slot[PW_POS] = PW;
	CRASH(p_dead);
	atomic {			/* CAS-to-maximum */
		if
		:: size < PW_POS + 1 -> size = PW_POS + 1
		:: else -> skip
		fi
	}
	CRASH(p_dead);
	p_int = false;
dead:
	p_fin = true
}

proctype truncater()
{
	byte cur, i;

	t_int = true;			/* the intent first, with its claim */
	CRASH(t_dead);
	atomic { gate == 0 -> gate = 1 };	/* CAS 0 -> claim */
	CRASH(t_dead);
	(!a_int);			/* the drain: each lane once */
	CRASH(t_dead);
	(!p_int);
	CRASH(t_dead);
again:					/* file_shrink() */
	cur = size;
	if
	:: cur > TT ->
		i = TT;
		do
		:: i < N -> slot[i] = 0; i++; CRASH(t_dead)
		:: else -> break
		od;
		atomic {		/* CAS cur -> TT; moved: again */
			if
			:: size == cur -> size = TT
			:: else -> goto again
			fi
		}
	:: else -> skip
	fi;
	CRASH(t_dead);
	gate = 0;			/* daxfs_gate_open */
	t_int = false;
dead:
	t_fin = true
}

/* A survivor that found the dead host: recover_slot(), at any moment. */
proctype recoverer()
{
	byte i, s;

end_wait:
	crashed;
	if
	:: t_dead && t_int ->		/* daxfs_gate_recover */
		if
		:: gate == 1 -> gate = 0
		:: else -> skip
		fi
	:: else -> skip
	fi;
#ifdef ZERO_RECOVERY
	if
	:: p_dead && p_int ->		/* zero [max(size, from), end) */
		s = size;
		i = (s > p_from -> s : p_from);
		if
		:: i < p_from + 1 -> slot[i] = 0
		:: else -> skip
		fi
	:: else -> skip
	fi;
#endif
	a_int = a_int && !a_dead;	/* the lane's intent goes */
	p_int = p_int && !p_dead;
	t_int = t_int && !t_dead;
	recovered = true
}

/* ---- the serial orders, for the final check ---- */

byte e_slot[N];
bool e_oz[N];			/* this slot may also read zero */
byte e_size;
byte e_off;
bool e_pstray;			/* a dead pwrite's byte may lie beyond EOF */

/* One call in the serial order.  mode 0: missing; 1: done; 2: done in
 * part (dead host: torn append, partly done truncate, a pwrite's byte
 * without the size). */
inline apply(op, mode)
{
	if
	:: mode == 0 -> skip
	:: op == OP_A ->
		e_off = e_size;
		j = e_size;
		do
		:: j < e_size + L -> e_slot[j] = APP; e_oz[j] = (mode == 2); j++
		:: else -> break
		od;
		e_size = e_size + L
	:: op == OP_P ->
		e_slot[PW_POS] = PW;
		e_oz[PW_POS] = false;
		if
		:: mode == 1 && e_size < PW_POS + 1 -> e_size = PW_POS + 1
		:: mode == 2 && e_size <= PW_POS -> e_pstray = true
		:: else -> skip
		fi
	:: op == OP_T && mode == 1 ->
		j = TT;
		do
		:: j < N -> e_slot[j] = 0; e_oz[j] = false; j++
		:: else -> break
		od;
		e_size = TT;
		e_pstray = false
	:: op == OP_T && mode == 2 ->
		j = TT;
		do
		:: j < e_size -> e_oz[j] = true; j++
		:: else -> break
		od
	fi
}

inline mode_of(op, m)
{
	if
	:: op == OP_A && a_dead -> m = dm
	:: op == OP_P && p_dead -> m = dm
	:: op == OP_T && t_dead -> m = dm
	:: else -> m = 1
	fi
}

/* Does the final state match the order (o0, o1, o2), the dead call in
 * mode dm?  Sets ok when it does. */
inline try_order(o0, o1, o2)
{
	j = 0;
	do
	:: j < N -> e_slot[j] = (j < S0 -> INIT : 0); e_oz[j] = false; j++
	:: else -> break
	od;
	e_size = S0;
	e_off = 255;
	e_pstray = false;
	mode_of(o0, m); apply(o0, m);
	mode_of(o1, m); apply(o1, m);
	mode_of(o2, m); apply(o2, m);
	good = (size == e_size) && (a_dead || a_off == e_off);
	j = 0;
	do
	:: j < N ->
		if
		:: j < e_size ->
			good = good && (slot[j] == e_slot[j] ||
					(e_oz[j] && slot[j] == 0))
		:: else ->
			good = good && (slot[j] == 0 ||
					(e_pstray && j == PW_POS &&
					 slot[j] == PW))
		fi;
		j++
	:: else -> break
	od;
	ok = ok || good
}

init
{
	byte j, m, dm;
	bool ok = false, good;

	atomic {
		j = 0;
		do
		:: j < S0 -> slot[j] = INIT; j++
		:: else -> break
		od;
		run appender();
		run pwriter();
		run truncater();
		run recoverer()
	}
	(a_fin && p_fin && t_fin && (!crashed || recovered));
	dm = 0;
	do
	:: dm <= 2 ->
		try_order(OP_A, OP_P, OP_T);
		try_order(OP_A, OP_T, OP_P);
		try_order(OP_P, OP_A, OP_T);
		try_order(OP_P, OP_T, OP_A);
		try_order(OP_T, OP_A, OP_P);
		try_order(OP_T, OP_P, OP_A);
		dm++
	:: else -> break
	od;
	assert(ok)
}
