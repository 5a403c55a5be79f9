/**
 * The animation clock: playing a document's steps one after another at a chosen speed,
 * and how long each frame's transitions last (shorter while playing fast).
 */

/** Milliseconds per step at speed 1. */
const BASE_INTERVAL = 800;

/** The speeds offered (steps per BASE_INTERVAL). */
export const SPEEDS = [0.25, 0.5, 1, 2, 4, 8, 16, 64];

/** What the clock drives. */
export interface PlaybackHost {
  /** Steps applied now, and in all. */
  currentStep(): number;
  stepCount(): number;
  /** Whether the view is gone (then the clock stops). */
  disposed(): boolean;
  /** Show `step` steps applied, as a change the learner made. */
  changeStep(step: number): void;
}

export class Playback {
  private playing = false;
  private speed = 1;
  private timer: number | null = null;

  /** `root` carries the class 'kg-playing' while playing. */
  constructor(
    private readonly root: HTMLElement,
    private readonly host: PlaybackHost
  ) {}

  get isPlaying(): boolean {
    return this.playing;
  }

  /** Play from the step shown (from the start when at the end). */
  play(): void {
    const n = this.host.stepCount();
    if (n === 0 || this.host.disposed()) {
      return;
    }
    if (this.host.currentStep() >= n) {
      this.host.changeStep(0);
    }
    this.playing = true;
    this.root.classList.add('kg-playing');
    this.schedule();
  }

  pause(): void {
    this.playing = false;
    this.root.classList.remove('kg-playing');
    if (this.timer !== null) {
      window.clearTimeout(this.timer);
      this.timer = null;
    }
  }

  /** Steps per BASE_INTERVAL (anything but a positive number is 1). */
  setSpeed(speed: number): void {
    this.speed = Number.isFinite(speed) && speed > 0 ? speed : 1;
    if (this.playing) {
      this.schedule();
    }
  }

  /** Milliseconds of a frame's transitions. */
  duration(): number {
    return this.playing ? Math.min(300, this.interval() * 0.6) : 250;
  }

  private interval(): number {
    return BASE_INTERVAL / this.speed;
  }

  private schedule(): void {
    if (this.timer !== null) {
      window.clearTimeout(this.timer);
    }
    this.timer = window.setTimeout(() => {
      this.timer = null;
      if (!this.playing || this.host.disposed()) {
        return;
      }
      this.host.changeStep(this.host.currentStep() + 1);
      if (this.host.currentStep() >= this.host.stepCount()) {
        this.pause();
      } else {
        this.schedule();
      }
    }, this.interval());
  }
}
