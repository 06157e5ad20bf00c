/**
 * Following the newest line of a conversation while an answer grows. The view follows until the person
 * scrolls up themselves (wheel, touch, keys, the scroll bar), and follows again when they scroll back to
 * the bottom or press "Jump to latest". A scroll event says only where the view is, not who moved it, so
 * it is read only just after the person did something that scrolls: the page's own scrolls, a render that
 * adds a table before the scroll event fires, and a smooth scroll's steps never let go by themselves.
 */
import { type RefObject, useCallback, useEffect, useRef, useState } from 'react';

/** How long after a wheel, touch or key a scroll event is taken as the person's (ms). */
const INTENT_MS = 500;
/** Within this many pixels of the bottom, scrolling down follows again. */
const BOTTOM_PX = 24;
/** Keys that scroll a focused area. */
const SCROLL_KEYS = new Set(['ArrowUp', 'ArrowDown', 'PageUp', 'PageDown', 'Home', 'End', ' ']);

export interface Follow {
  /** Whether the person scrolled away from the newest line (then "Jump to latest" is offered). */
  away: boolean;
  /** Follows again, from where the view is to the newest line. */
  jumpToLatest: () => void;
  /** Stops following, for the page's own move to an earlier place (showing a run from the timeline). */
  release: () => void;
}

/** Keeps `scroller` at its bottom as `content` grows, unless the person scrolled up. */
export function useFollow(
  scroller: RefObject<HTMLElement | null>,
  content: RefObject<HTMLElement | null>,
): Follow {
  const pinned = useRef(true);
  const [away, setAway] = useState(false);
  const setPinned = useCallback((value: boolean) => {
    pinned.current = value;
    setAway(!value);
  }, []);

  useEffect(() => {
    const element = scroller.current;
    const inner = content.current;
    if (!element || !inner) return;
    let intentUntil = 0;
    let pointerDown = false;
    let lastTop = element.scrollTop;
    const toBottom = () => {
      if (!pinned.current) return;
      element.scrollTop = element.scrollHeight;
      lastTop = element.scrollTop;
    };
    const intend = () => {
      intentUntil = performance.now() + INTENT_MS;
    };
    const onWheel = (event: WheelEvent) => {
      intend();
      // Upwards is a wish to read back, even when the view cannot move far (near the top).
      if (event.deltaY < 0 && pinned.current) setPinned(false);
    };
    const onKey = (event: KeyboardEvent) => {
      const target = event.target as HTMLElement;
      if (target.closest('textarea, input, [contenteditable="true"]')) return;
      if (SCROLL_KEYS.has(event.key)) intend();
    };
    const onPointerDown = () => {
      pointerDown = true;
    };
    const onPointerUp = () => {
      pointerDown = false;
    };
    const onScroll = () => {
      const top = element.scrollTop;
      const moved = top - lastTop;
      lastTop = top;
      if (!pointerDown && performance.now() > intentUntil) return;
      const gap = element.scrollHeight - top - element.clientHeight;
      if (moved < -1 && pinned.current) setPinned(false);
      else if (moved >= 0 && gap < BOTTOM_PX && !pinned.current) setPinned(true);
    };
    const resized = new ResizeObserver(toBottom);
    resized.observe(inner);
    resized.observe(element);
    element.addEventListener('wheel', onWheel, { passive: true });
    element.addEventListener('touchstart', intend, { passive: true });
    element.addEventListener('touchmove', intend, { passive: true });
    element.addEventListener('keydown', onKey);
    element.addEventListener('pointerdown', onPointerDown);
    window.addEventListener('pointerup', onPointerUp);
    element.addEventListener('scroll', onScroll, { passive: true });
    return () => {
      resized.disconnect();
      element.removeEventListener('wheel', onWheel);
      element.removeEventListener('touchstart', intend);
      element.removeEventListener('touchmove', intend);
      element.removeEventListener('keydown', onKey);
      element.removeEventListener('pointerdown', onPointerDown);
      window.removeEventListener('pointerup', onPointerUp);
      element.removeEventListener('scroll', onScroll);
    };
  }, [scroller, content, setPinned]);

  const jumpToLatest = useCallback(() => {
    setPinned(true);
    const element = scroller.current;
    if (!element) return;
    // Instantly: a smooth scroll would be overtaken by the answer growing under it.
    element.scrollTop = element.scrollHeight;
  }, [scroller, setPinned]);

  const release = useCallback(() => setPinned(false), [setPinned]);

  return { away, jumpToLatest, release };
}
