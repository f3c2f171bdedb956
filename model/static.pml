/*
 * Static members' reservations (docs/static-members.md), checked with
 * SPIN. README.md ("Static members") maps each step to the Go code.
 *
 * N static members, N partitions; the group starts converged: every member
 * registered with its reservation, partition p owned by member p (what
 * range-by-id gives over the sorted ids). Members then leave (Close or a
 * crash: their registration and owner nodes go) and come back or not, at
 * any step. ZooKeeper is one linearizable store, each request one step.
 *
 * Time is counted in an instance's own reads of the view: a grace window
 * ends after WIN reads that saw the same absence (the same last write of
 * the reservation), whatever the other instances did meanwhile, so
 * instances end their windows at any moment relative to each other.
 *
 * Flags (spin -a -DFLAG):
 *   LIVE              liveness run
 *   -- variants that must fail --
 *   NO_RESERVATION    views hold registered members only (upstream's)
 *   VERSION_TIMING    an absence is named by the reservation's version,
 *                     not by its last write (mzxid)
 *   SPLIT_DELETE      the delete is sent in a later step than the read it
 *                     is fenced by (a round trip): the residual race
 *   NO_DELETE         nobody deletes a reservation whose window ended
 *   RELEASE_RESERVED  a partition consumed here that a reserved share
 *                     names now (the shares computed again while its
 *                     member is away) is released, and waits unowned
 */

#define N        3
#define NOBODY   255
#define NONE     255
#ifndef WIN
#define WIN      2        /* reads per grace window */
#endif
#ifndef MAXLEAVE
#define MAXLEAVE 2        /* leaves (at most N-1: someone stays) */
#endif

bool reg[N];      /* /consumers/g/ids/<i> exists */
bool res[N];      /* /consumers/g/static/<i> exists */
byte rver[N];     /* its version: 0 when created */
byte rzx[N];      /* the zxid of its last write (Stat.Mzxid) */
byte zx = N;      /* the store's last zxid */
byte owner[N];    /* owner node of partition p: NOBODY or a member */
byte leaves = 0;
bool deleted = false;  /* a reservation was deleted (ghost) */

/* may_release: a partition held here goes only to a registered member's
 * share (or to nobody's); one a reserved share names now is kept until its
 * member is back */
#ifdef RELEASE_RESERVED
#define may_release(a) true
#else
#define may_release(a) (a == NOBODY || live_v[a])
#endif

#define owned (owner[0] != NOBODY && owner[1] != NOBODY && owner[2] != NOBODY)

/* assignee: the (p mod k)-th of the k members of the view, in id order
 * (a pure function of the view; every instance computes the same from the
 * same view). */
inline assignee(p, a) {
	k = 0;
	for (j : 0 .. N-1) { if :: members[j] -> k++ :: else fi }
	a = NOBODY;
	if
	:: k > 0 ->
		c = p % k;
		for (j : 0 .. N-1) {
			if
			:: members[j] && c == 0 && a == NOBODY -> a = j
			:: members[j] && c > 0 -> c--
			:: else
			fi
		}
	:: else
	fi
}

proctype Member(byte me) {
	bool holds[N];     /* partitions this instance claimed */
	bool live_v[N];    /* the view: registered */
	bool members[N];   /* the view: registered or reserved */
	byte tzx[N];       /* the absence this instance times: its reservation's mzxid */
	byte tver[N];      /* and its version */
	byte age[N];       /* reads that saw it */
	byte j, k, c, p, a;
	holds[me] = true;
	for (j : 0 .. N-1) { tzx[j] = NONE }
	goto loop;

join:
	atomic {           /* the ephemeral registration and the reservation,
	                    * written again, in one transaction (atomic, not
	                    * d_step: a goto may not enter a d_step) */
		reg[me] = true;
		if
		:: res[me] -> rver[me]++
		:: else -> res[me] = true; rver[me] = 0
		fi;
		zx++; rzx[me] = zx
	}
loop:
	do
	:: /* read the view: the registrations (one request), */
		d_step { for (j : 0 .. N-1) { live_v[j] = reg[j] }; j = 0 }
		/* then the reservations: time the absences, delete those whose
		 * window ended (fenced by the version just read, and by the
		 * member's absence, in one transaction), and reconcile:
		 * release what moved away, claim what is ours. One step: a stale
		 * view changes nothing here, the claims being exclusive. */
		d_step {
			for (j : 0 .. N-1) {
				members[j] = live_v[j];
#ifndef NO_RESERVATION
				if
				:: res[j] && !live_v[j] ->
					members[j] = true;
#ifdef VERSION_TIMING
					if
					:: tzx[j] == NONE || tver[j] != rver[j] -> tzx[j] = rzx[j]; tver[j] = rver[j]; age[j] = 0
					:: else
					fi;
#else
					if
					:: tzx[j] != rzx[j] -> tzx[j] = rzx[j]; tver[j] = rver[j]; age[j] = 0
					:: else
					fi;
#endif
					if :: age[j] < WIN -> age[j]++ :: else fi
				:: else -> tzx[j] = NONE; age[j] = 0
				fi;
#if !defined(SPLIT_DELETE) && !defined(NO_DELETE)
				if
				:: tzx[j] != NONE && age[j] >= WIN && res[j] && rver[j] == tver[j] && !reg[j] ->
					assert(rzx[j] == tzx[j]) /*(8)*/;
					res[j] = false; deleted = true; members[j] = live_v[j]; tzx[j] = NONE; age[j] = 0
				:: else
				fi
#endif
#endif
			};
			for (p : 0 .. N-1) {
				/* (6): one owner: what an instance holds, its owner node says */
				assert(!holds[p] || owner[p] == me) /*(6)*/;
				assignee(p, a);
				if
				:: holds[p] && a != me && may_release(a) ->
					/* (9): a partition consumed here is never left to a
					 * reserved share: kept until its member is back */
					assert(a == NOBODY || live_v[a]) /*(9)*/;
					if :: owner[p] == me -> owner[p] = NOBODY :: else fi;
					holds[p] = false
				:: !holds[p] && a == me && owner[p] == NOBODY ->
					owner[p] = me; holds[p] = true;
					/* (7): nothing moves while every reservation stands: a
					 * partition is claimed by its original owner only, and a
					 * member back takes only its own share */
					assert(deleted || p == me) /*(7)*/
				:: else
				fi
			};
			j = 0; p = 0; a = 0; k = 0; c = 0;
			for (j : 0 .. N-1) { live_v[j] = false; members[j] = false }; j = 0
		}
#ifdef SPLIT_DELETE
		/* the delete, a round trip after the read it is fenced by */
		d_step {
			for (j : 0 .. N-1) {
				if
				:: tzx[j] != NONE && age[j] >= WIN && res[j] && rver[j] == tver[j] && !reg[j] ->
					assert(rzx[j] == tzx[j]) /*(8)*/;
					res[j] = false; deleted = true; tzx[j] = NONE; age[j] = 0
				:: else
				fi
			}; j = 0
		}
#endif
	:: leaves < MAXLEAVE ->
		/* leave: Close (releases, deregisters) or a crash (the session's
		 * end deletes the same nodes); come back or not */
		d_step {
			leaves++;
			for (p : 0 .. N-1) {
				if :: owner[p] == me -> owner[p] = NOBODY :: else fi;
				holds[p] = false
			}
			reg[me] = false;
			for (j : 0 .. N-1) { tzx[j] = NONE; tver[j] = 0; age[j] = 0 }; j = 0; p = 0
		}
		if
		:: goto join
		:: goto gone
		fi
	od;
gone:
	skip
}

init {
	byte i;
	atomic {
		for (i : 0 .. N-1) {
			reg[i] = true; res[i] = true; rver[i] = 0; rzx[i] = i + 1; owner[i] = i
		}
		for (i : 0 .. N-1) { run Member(i) }
	}
}

#ifdef LIVE
ltl live { <> [] owned }
#endif
