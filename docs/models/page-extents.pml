/*
 * The page free stack's extents (format 12; core/alloc.c page_take,
 * pages_push; docs/alloc.md "Free extents").  HOSTS hosts share one stack
 * of PAGES pages (1..PAGES; 0 is "none").  A stack word names an extent
 * {first, n}: pages first .. first + n - 1, all free; the link to the next
 * extent lies in page `first`.  Page numbers here run away from the page
 * that holds the link: core/alloc.c names an extent by its last page,
 * which holds the link, and takes from its front, the same protocol in a
 * mirror.  The head is {first, n, tag}.  Each host
 * repeats, in any order:
 *   - take up to `want` pages: the tail of the top extent when it has
 *     more (the head keeps first, n shrinks), else the whole extent (the
 *     head moves to its link);
 *   - push a contiguous range of pages it holds: joined to the top extent
 *     when just above it (only the head changes), or just below it (our
 *     first page takes the top's link), else on top of it.
 * What a host stores into pages it holds (file data over old links) is
 * what a link read from a page off the stack gives: anything.
 * Any host may die at any step (at most MAXCRASH).  The run is bounded by
 * MAXCHG successful head CASes.
 *
 * The head's two words are loaded tag first, then {first, n} (one word in
 * the region: first | (n - 1)); links are read after both.  A link read
 * from a page that is not the first page of an extent on the stack is
 * garbage: any value, as after a scribble by its new owner.
 *
 * Checked (spin -a; ./pan, exhaustive): after every successful CAS and at
 * the end,
 *   - a take hands out only pages that were free (no page twice);
 *   - the extents on the stack are disjoint, hold only free pages, and
 *     hold every free page (nothing lost but what a dead host held);
 *   - no invalid end state.
 * -DBUG_FRONT_TAKE takes the front of the top extent instead of its tail,
 * storing the link into the new first page before the CAS: spin finds a
 * page of another host's take scribbled (the reason takes are tails).
 * -DBUG_NO_TAG compares only {first, n}: spin finds a stale link
 * installed.
 */
#ifndef HOSTS
#define HOSTS		2
#endif
#ifndef PAGES
#define PAGES		4
#endif
#ifndef MAXCHG
#define MAXCHG		4
#endif
#ifndef MAXCRASH
#define MAXCRASH	1
#endif

byte head_first = 1;	/* initially one extent of all PAGES pages */
byte head_n = PAGES;
byte head_tag;
byte link_first[PAGES + 1];
byte link_n[PAGES + 1];
byte owner[PAGES + 1];	/* ghost: 0 free, h + 1 held by host h */
bool scribbled[PAGES + 1];	/* ghost: a host wrote a page another held */
byte changes;
byte crashes;
byte ended;

hidden byte cw, cn, ck, cc, ci, cf, cx;

/* cx = 1 when page p starts an extent on the stack (atomic callers) */
inline on_stack_first(p)
{
	cx = 0;
	cw = head_first;
	cn = head_n;
	cc = 0;
	do
	:: cw == 0 || cc > PAGES -> break
	:: else ->
		if
		:: cw == p -> cx = 1
		:: else
		fi;
		ck = link_first[cw];
		cn = link_n[cw];
		cw = ck;
		cc++
	od;
	cw = 0; cn = 0; cc = 0; ck = 0
}

/* The stack holds exactly the free pages, each once, in disjoint extents. */
inline check_stack()
{
	cw = head_first;
	cn = head_n;
	cc = 0;		/* free pages counted on the stack */
	do
	:: cw == 0 -> break
	:: else ->
		assert(cn >= 1 && cw + cn - 1 <= PAGES);
		ci = cw;
		do
		:: ci >= cw + cn -> break
		:: else ->
			assert(owner[ci] == 0);
			cc++;
			assert(cc <= PAGES);	/* no overlap, no cycle */
			ci++
		od;
		ck = link_first[cw];
		cn = link_n[cw];
		cw = ck
	od;
	cf = 0;
	ci = 1;
	do
	:: ci > PAGES -> break
	:: else ->
		if
		:: owner[ci] == 0 -> cf++
		:: else
		fi;
		ci++
	od;
	assert(cc == cf);
	ci = 1;
	do
	:: ci > PAGES -> break
	:: else -> assert(!scribbled[ci]); ci++
	od;
	cw = 0; cn = 0; cc = 0; ck = 0; ci = 0; cf = 0
}

#define CRASH \
	if \
	:: crashes < MAXCRASH -> atomic { crashes++ }; goto dead \
	:: true \
	fi

#define HEAD_LOAD	tag = head_tag; atomic { f = head_first; n = head_n }

#ifdef BUG_NO_TAG
#define HEAD_MATCHES	(head_first == f && head_n == n)
#else
#define HEAD_MATCHES	(head_first == f && head_n == n && head_tag == tag)
#endif
#define HEAD_SET(nf, nn)	head_first = nf; head_n = nn; head_tag = tag + 1; changes++

/* the link of page f: real while f starts an extent on the stack, else
 * whatever its holder stored there */
inline read_link()
{
	atomic {
		on_stack_first(f);
		if
		:: cx -> lf = link_first[f]; ln = link_n[f]
		:: else ->
			select(lf : 0 .. PAGES);
			select(ln : 1 .. PAGES)
		fi;
		cx = 0
	}
}

/* a store into page p: ours, or a free one (harmless while it is free),
 * or one another host holds (a bug: its data is gone) */
inline store_page(p, vf, vn)
{
	atomic {
		if
		:: owner[p] != 0 && owner[p] != me + 1 -> scribbled[p] = 1
		:: else
		fi;
		link_first[p] = vf;
		link_n[p] = vn
	}
}

proctype host(byte me)
{
	byte tag, f, n, lf, ln, want, s, l, x, to_f, to_n;

	do
	:: changes >= MAXCHG -> break
	:: changes < MAXCHG ->		/* page_take */
		select(want : 1 .. 2);
take:
		CRASH;
		HEAD_LOAD;
		if
		:: f == 0 -> goto done_op
		:: else
		fi;
		if
		:: n > want ->
#ifdef BUG_FRONT_TAKE
			/* the front: the link moves into the new first page */
			read_link();
			store_page(f + want, lf, ln);
			to_f = f + want; to_n = n - want
#else
			to_f = f; to_n = n - want
#endif
		:: else ->
			read_link();
			to_f = lf; to_n = ln
		fi;
		CRASH;
		atomic {
			if
			:: HEAD_MATCHES ->
				HEAD_SET(to_f, to_n);
				if
#ifdef BUG_FRONT_TAKE
				:: n > want -> s = f; l = want
#else
				:: n > want -> s = f + n - want; l = want
#endif
				:: else -> s = f; l = n
				fi;
				x = s;
				do
				:: x >= s + l -> break
				:: else ->
					assert(owner[x] == 0);	/* once */
					owner[x] = me + 1;
					x++
				od;
				check_stack()
			:: else -> goto take
			fi
		}
	:: changes < MAXCHG ->		/* pages_push: a range we hold */
		atomic {
			select(s : 1 .. PAGES);
			select(l : 1 .. PAGES);
			if
			:: s + l - 1 > PAGES -> goto done_op
			:: else
			fi;
			x = s;
			do
			:: x >= s + l -> break
			:: x < s + l && owner[x] != me + 1 -> goto done_op
			:: x < s + l && owner[x] == me + 1 -> x++
			od
		}
push:
		CRASH;
		HEAD_LOAD;
		if
		:: f != 0 && f + n == s ->	/* just above the top */
			to_f = f; to_n = n + l
		:: f != 0 && s + l == f ->	/* just below: its link */
			read_link();
			store_page(s, lf, ln);
			to_f = s; to_n = n + l
		:: else ->
			store_page(s, f, n);
			to_f = s; to_n = l
		fi;
		CRASH;
		atomic {
			if
			:: HEAD_MATCHES ->
				HEAD_SET(to_f, to_n);
				x = s;
				do
				:: x >= s + l -> break
				:: else -> owner[x] = 0; x++
				od;
				check_stack()
			:: else -> goto push
			fi
		}
done_op:
		skip;
		/* forget this op's locals: they no longer matter */
		d_step { tag = 0; f = 0; n = 0; lf = 0; ln = 0; want = 0;
			 s = 0; l = 0; x = 0; to_f = 0; to_n = 0 }
	od;
dead:
	ended++
}

init {
	byte i;

	atomic {
		i = 0;
		do
		:: i < HOSTS -> run host(i); i++
		:: else -> break
		od
	}
	ended == HOSTS;
	check_stack()
}
