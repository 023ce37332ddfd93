import { describeEdgeOf } from './edge';

// libwebp's whole picture (72 MB) and its capped result; a crop decoded as a region; the lossless strip.
describeEdgeOf('jpeg-48mp.jpg', ['convert to webp', 'crop 2000x1500 to jpg', 'remove-metadata']);
