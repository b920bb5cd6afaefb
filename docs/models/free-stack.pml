/*
 * The allocator's free stacks (core/alloc.c stack_pop, daxfs_free_push_chain,
 * daxfs_free_take_all; docs/alloc.md "Structures", "Why a 64-bit tag").
 * HOSTS hosts share one stack of OBJS objects (1..OBJS; 0 is the empty
 * offset).  Each host repeats, in any order: pop one object; push one
 * object it holds; take the whole stack (a compaction take); push back
 * everything it holds as one pre-linked chain (a compaction return, a
 * carved page, a batch remainder).  Any host may die at any step
 * (at most MAXCRASH).  The run is bounded by MAXCHG successful head CASes.
 *
 * The head is {off, tag}: a CAS installs {new, tag + 1} only if both
 * halves still match; the halves are loaded one after the other (tag,
 * then off), and a pop reads its object's next link only after both.
 * A link read from an object that is not on the stack (popped and reused
 * by someone else meanwhile) is garbage: any offset.
 *
 * Checked (spin -a; ./pan, exhaustive): after every successful CAS and at
 * the end,
 *   - a pop returns only an object that was on the stack (no object is
 *     handed out twice: two files never share memory);
 *   - the stack holds exactly the free objects, each once, no cycle:
 *     nothing is lost except what a dead host held (popped and not yet
 *     used, taken by a compaction, or pushed without its CAS landing):
 *     that is what fsck reclaims (docs/alloc.md "Crash story");
 *   - no invalid end state (no host waits forever).
 *
 * The tag: TAG_MOD (256) is more than MAXCHG, so in a run the tag never
 * repeats, which is what a 64-bit tag gives a real host (docs/alloc.md:
 * 584 years at one change per nanosecond).  -DTAG_BITS=2 gives a tag
 * that wraps after 4 changes, as format 1's 20-bit tag wrapped after
 * 2^20: spin finds a pop that installs an object another host holds.
 * -DBUG_EARLY_NEXT reads the link between the two halves' loads (off,
 * next, then tag): spin finds the same double hand-out with a tag that
 * never wraps, which is why links are read only after both loads.
 */
#ifndef HOSTS
#define HOSTS		2
#endif
#ifndef OBJS
#define OBJS		3
#endif
#ifndef MAXCHG
#define MAXCHG		4
#endif
#ifndef MAXCRASH
#define MAXCRASH	1
#endif
#ifdef TAG_BITS
#define TAG_MOD		(1 << TAG_BITS)
#else
#define TAG_MOD		256
#endif

#define NIL		0

byte head_off = 1;
byte head_tag;
byte next[OBJS + 1];
byte owner[OBJS + 1];	/* ghost: 0 on the stack, h + 1 held by host h */
bool crashed[HOSTS];	/* ghost: host h died (what it held is leaked) */
byte changes;		/* successful head CASes */
byte crashes;
byte ended;

hidden byte cw, cn, ci, cf;

/* The stack holds exactly the free objects, each once (a cycle would
 * walk more than OBJS links). */
inline check_stack()
{
	cw = head_off;
	cn = 0;
	do
	:: cw == NIL -> break
	:: else ->
		assert(owner[cw] == 0);
		cn++;
		assert(cn <= OBJS);
		cw = next[cw]
	od;
	cf = 0;
	ci = 1;
	do
	:: ci > OBJS -> break
	:: else ->
		if
		:: owner[ci] == 0 -> cf++
		:: else
		fi;
		ci++
	od;
	assert(cn == cf);
	cw = 0; cn = 0; ci = 0; cf = 0
}

#define CRASH \
	if \
	:: crashes < MAXCRASH -> atomic { crashes++; crashed[me] = 1 }; goto dead \
	:: true \
	fi

/* head_load: two plain loads, tag first */
#define HEAD_LOAD	tag = head_tag; off = head_off

/* a link: the real one while the object is on the stack (nobody writes
 * it then), else whatever the object's new owner stored there */
inline read_next()
{
	atomic {
		if
		:: owner[off] == 0 -> nxt = next[off]
		:: else -> select(nxt : 0 .. OBJS)
		fi
	}
}

/* head_cas: {off, tag} -> {new, tag + 1}, both halves compared */
#define HEAD_MATCHES	(head_off == off && head_tag == tag)
#define HEAD_SET(new)	head_off = new; head_tag = (tag + 1) % TAG_MOD; changes++

proctype host(byte me)
{
	byte tag, off, nxt, x, first, last;

	do
	:: changes >= MAXCHG -> break
	:: changes < MAXCHG ->		/* stack_pop */
pop:
		CRASH;
#ifdef BUG_EARLY_NEXT
		off = head_off;
		if
		:: off == NIL -> goto done_op
		:: else
		fi;
		read_next();
		tag = head_tag;
#else
		HEAD_LOAD;
		if
		:: off == NIL -> goto done_op	/* empty */
		:: else
		fi;
		read_next();
#endif
		atomic {
			if
			:: HEAD_MATCHES ->
				HEAD_SET(nxt);
				assert(owner[off] == 0);	/* handed out once */
				owner[off] = me + 1;
				check_stack()
			:: else -> goto pop
			fi
		}
	:: changes < MAXCHG ->		/* daxfs_free_obj: one object we hold */
		atomic {
			x = 1;
			do
			:: x > OBJS -> goto done_op	/* chose none */
			:: x <= OBJS && owner[x] == me + 1 -> break
			:: x <= OBJS -> x++
			od
		}
		CRASH;
push1:
		HEAD_LOAD;
		next[x] = off;
		CRASH;
		atomic {
			if
			:: HEAD_MATCHES ->
				HEAD_SET(x);
				owner[x] = 0;
				check_stack()
			:: else -> goto push1
			fi
		}
	:: changes < MAXCHG ->		/* daxfs_free_take_all */
		CRASH;
take:
		HEAD_LOAD;
		if
		:: off == NIL -> goto done_op	/* empty, not corrupt */
		:: else
		fi;
		atomic {
			if
			:: HEAD_MATCHES ->
				HEAD_SET(NIL);
				/* ghost: the chain is ours now */
				x = off;
				do
				:: x == NIL -> break
				:: else ->
					assert(owner[x] == 0);
					owner[x] = me + 1;
					x = next[x]
				od;
				check_stack()
			:: else -> goto take
			fi
		}
	:: changes < MAXCHG ->		/* daxfs_free_push_chain: all we hold */
		/* link our objects privately (nobody follows these links
		 * but a stale popper, whose CAS then fails) */
		atomic {
			first = NIL;
			last = NIL;
			x = 1;
			do
			:: x > OBJS -> break
			:: else ->
				if
				:: owner[x] == me + 1 ->
					if
					:: first == NIL -> first = x
					:: else -> next[last] = x
					fi;
					last = x
				:: else
				fi;
				x++
			od;
			if
			:: first == NIL -> goto done_op
			:: else
			fi
		}
		CRASH;
pushc:
		HEAD_LOAD;
		next[last] = off;
		CRASH;
		atomic {
			if
			:: HEAD_MATCHES ->
				HEAD_SET(first);
				x = first;
				do
				:: x == off -> break
				:: else -> owner[x] = 0; x = next[x]
				od;
				check_stack()
			:: else -> goto pushc
			fi
		}
done_op:
		skip;
		/* forget this op's locals: they no longer matter */
		d_step { tag = 0; off = 0; nxt = 0; x = 0; first = 0; last = 0 }
	od;
dead:
	ended++
}

init {
	byte i;

	atomic {
		i = 1;
		do
		:: i < OBJS -> next[i] = i + 1; i++
		:: else -> break
		od;
		i = 0;
		do
		:: i < HOSTS -> run host(i); i++
		:: else -> break
		od
	}
	ended == HOSTS;
	check_stack()
}
