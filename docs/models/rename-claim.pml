/*
 * The rename claim (core/namei.c claim_take / claim_release, recovery in
 * core/hosts.c check_dead and daxfs_rename_recover; docs/namespace.md
 * "Rename", docs/hosts.md): N hosts each run R renames under the one
 * cluster-wide claim word.  Any host may die at any step (at most
 * MAXCRASH), a recoverer too.  With ZOMBIE, a live host may also be
 * declared dead (its lease ran out while it was stopped) and go on
 * running: its fence checks must stop it.
 *
 * Checked (spin -a; ./pan): the assertions below and no invalid end
 * state (a dead holder never wedges the others).
 *   - renames are serialized: no host starts its rename's steps while
 *     another rename (or the recovery of a dead renamer's steps) is in
 *     its steps, and only the claim holder, or the recoverer of a dead
 *     holder, acts on them;
 *   - every host that did not die finished all its renames.
 * -DBUG_NO_FENCE: a host declared dead keeps acting without checking its
 * fence (the known-bad variant): spin finds two renames interleaved.
 */
#ifndef N
#define N		2
#endif
#ifndef R
#define R		1
#endif
#ifndef MAXCRASH
#define MAXCRASH	1
#endif

#define FREE		0
#define ALIVE		1
#define DEAD		2
#define RECOVERING	3
#define NONE		255

bool zombies;

byte st[3];		/* host slot state (one generation per slot here) */
byte claim;		/* 0, or holder slot + 1 */
byte busy = NONE;	/* ghost: whose rename steps are in progress */
bool crashed[3];	/* stopped for good */
byte recoverer[3];	/* ghost: who runs the slot's recovery */
byte crashes;
byte finished;

#define CRASH \
	if \
	:: atomic { crashes < MAXCRASH -> crashes++; crashed[me] = 1; finished++ }; goto dead \
	:: true \
	fi

/* our slot is still ALIVE: the fence (daxfs_fenced) */
#ifdef BUG_NO_FENCE
#define FENCED	false
#else
#define FENCED	(st[me] != ALIVE)
#endif

/* the steps of a rename (pins, publish, swap, counts), each one fenced
 * and done atomically with its fence check (see "leaves out") */
inline rename_steps()
{
	atomic {
		if
		:: FENCED -> goto fenced
		:: else -> assert(busy == NONE && claim == me + 1); busy = me
		fi
	}
	CRASH;
	atomic {
		if
		:: FENCED -> goto fenced
		:: else -> assert(busy == me); busy = me
		fi
	}
	CRASH;
	atomic {
		if
		:: FENCED -> goto fenced
		:: else -> assert(busy == me); busy = NONE
		fi
	}
}

/* recover_slot for slot s, won by us (RECOVERING): finish its rename
 * steps if it was in them (rolled forward or back), then release the
 * claim if it names s; then the slot is FREE */
inline recover(s)
{
	recoverer[s] = me;
	CRASH;
	atomic { if :: busy == s -> busy = NONE :: else fi }
	CRASH;
	atomic { if :: claim == s + 1 -> claim = 0 :: else fi }
	CRASH;
	atomic { if :: st[s] == RECOVERING && recoverer[s] == me -> st[s] = FREE :: else fi }
}

/* check_dead(s): declare an expired host dead, recover it (exactly one
 * survivor wins DEAD -> RECOVERING), or take over a stalled recovery
 * whose recoverer died.  Blocks while a live survivor recovers it. */
inline check_dead(s)
{
	do
	:: st[s] == FREE -> break
	:: st[s] == ALIVE && !crashed[s] && !zombies -> break	/* not expired */
	:: atomic { st[s] == ALIVE && (crashed[s] || zombies) -> st[s] = DEAD }
	:: atomic { st[s] == DEAD -> st[s] = RECOVERING; won = true }; recover(s)
	:: atomic { st[s] == RECOVERING && recoverer[s] != NONE &&
		    crashed[recoverer[s]] -> won = true }; recover(s)
	od
}

proctype Host(byte me)
{
	byte cur, s, n;
	bool won;

	for (n : 1 .. R) {
		/* claim_take */
		do
		:: st[me] != ALIVE -> goto fenced
		:: atomic { claim == 0 -> claim = me + 1; break }
		:: atomic { claim != 0 -> cur = claim }
			s = cur - 1;
			if
			:: s == me -> skip	/* check_dead skips our own slot */
			:: s != me && st[s] == ALIVE && !crashed[s] && !zombies -> skip	/* wait */
			:: else ->
				check_dead(s);
				atomic { if :: claim == cur && st[s] == FREE -> claim = me + 1; break :: else fi }
			fi
		od;
		CRASH;
		rename_steps();
		CRASH;
		/* claim_release */
		atomic { if :: claim == me + 1 -> claim = 0 :: else fi }
	}
	finished++;
	goto dead;
fenced:
	/* declared dead meanwhile: the op stops; the slot is recovery's */
	finished++;
dead:
	skip
}

init
{
	byte h;

#ifdef ZOMBIE
	zombies = true;
#endif
	atomic {
		for (h : 0 .. N - 1) {
			st[h] = ALIVE;
			recoverer[h] = NONE
		}
		for (h : 0 .. N - 1) {
			run Host(h)
		}
	}
	finished == N;
}
